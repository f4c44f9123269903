"""The transport: the Faust app, the topics and their creation, the sessions Table, Kafka admin, in-order
delivery and intake, batches, the memory journal topic, typed signals and timers; kafka/faust_private/ holds every
use of Faust's and aiokafka's private surface."""
