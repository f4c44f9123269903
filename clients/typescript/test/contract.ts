// A fetch that checks every JSON request and reply against the OpenAPI document the server serves (ajv, draft
// 2020-12, as OpenAPI 3.1 says), so the TypeScript client and the Python tests hold the server to one contract.

import { Ajv2020 } from 'ajv/dist/2020.js'  // the named export: ajv is CommonJS, its default is not the class under NodeNext

type Schema = Record<string, unknown>
interface Operation { requestBody?: { content: Record<string, { schema: Schema }> }, responses: Record<string, { content?: Record<string, { schema: Schema }> }> }
interface Document { paths: Record<string, Record<string, Operation>>, components: Schema }

export interface Checked {
  fetch: typeof fetch
  /** Checks replies only: for requests a test sends malformed on purpose. */
  repliesOnly: typeof fetch
  count: () => number
  document: Document
}

export async function checkingFetch (baseUrl: string): Promise<Checked> {
  const document = await (await fetch(`${baseUrl.replace(/\/+$/, '')}/v1/openapi.json`)).json() as Document
  const ajv = new Ajv2020({ strict: false, validateFormats: false })
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const templates = Object.keys(document.paths).map(template => ({
    template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`)
  }))
  let count = 0

  function validate (key: string, schema: Schema, value: unknown): void {
    let check = validators.get(key)
    if (check === undefined) {
      check = ajv.compile({ ...schema, components: document.components })
      validators.set(key, check)
    }
    if (!check(value)) throw new Error(`${key} does not match the OpenAPI document: ${ajv.errorsText(check.errors)} in ${JSON.stringify(value).slice(0, 300)}`)
    count += 1
  }

  function operation (method: string, url: URL): [string, Operation] {
    const found = templates.find(({ pattern }) => pattern.test(url.pathname))
    const op = found && document.paths[found.template]?.[method.toLowerCase()]
    if (!found || !op) throw new Error(`${method} ${url.pathname} is not in the OpenAPI document`)
    return [found.template, op]
  }

  const checking = (requests: boolean): typeof fetch => async (input, init) => {
    const url = new URL(String(input))
    const method = init?.method ?? 'GET'
    const [template, op] = operation(method, url)
    if (requests && typeof init?.body === 'string') {
      const schema = op.requestBody?.content['application/json']?.schema
      if (!schema) throw new Error(`${method} ${template} takes no body`)
      validate(`request ${method} ${template}`, schema, JSON.parse(init.body))
    }
    const response = await fetch(input, init)
    const text = await response.text()
    const schema = op.responses[String(response.status)]?.content?.['application/json']?.schema
    if (!schema) throw new Error(`${method} ${template} answered ${response.status}, which the document does not list`)
    validate(`reply ${response.status} to ${method} ${template}`, schema, JSON.parse(text))
    return new Response(text, { status: response.status, headers: response.headers })
  }
  return { fetch: checking(true), repliesOnly: checking(false), count: () => count, document }
}
