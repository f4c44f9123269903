// A gateway in Node: turns as JSON lines (stdin, or the file named after the topic) into the turns topic
// with kafkajs 2, each keyed by its session key as UTF-8 bytes, placed by the Java-compatible murmur2
// partitioner (Partitioners.DefaultPartitioner, named so kafkajs does not warn), acks=all, the value the
// line's own bytes.
//
//   node produce.js BOOTSTRAP TOPIC [FILE]
//
// Prints "sent N" once every record is acknowledged; exits 1 when a send fails, 2 on bad input.
'use strict'

const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')

/** One id as a key part: %, :, { and } percent-escaped in one pass, everything else as it is. */
const escape = part => part.replace(/[%:{}]/g, c => ({ '%': '%25', ':': '%3A', '{': '%7B', '}': '%7D' })[c])

/** `tenant:session_id` (escaped parts), or the escaped `session_id` when the turn has no tenant. */
function sessionKey (turn) {
  if (typeof turn.session_id !== 'string') throw new Error('a turn without a string session_id')
  const session = escape(turn.session_id)
  return turn.tenant ? `${escape(String(turn.tenant))}:${session}` : session
}

async function main () {
  const [bootstrap, topic, file] = process.argv.slice(2)
  if (!bootstrap || !topic || process.argv.length > 5) {
    console.error('usage: node produce.js BOOTSTRAP TOPIC [FILE]  (JSON lines of turns on stdin without FILE)')
    process.exit(2)
  }
  let messages
  try {
    const text = fs.readFileSync(file || 0, 'utf8')
    messages = text.split('\n').filter(line => line.trim()).map(line => ({
      key: Buffer.from(sessionKey(JSON.parse(line)), 'utf8'),
      value: Buffer.from(line, 'utf8'),
    }))
  } catch (error) {
    console.error(`bad input: ${error.message}`)
    process.exit(2)
  }

  const kafka = new Kafka({ clientId: 'turnstream-node-producer', brokers: bootstrap.split(','), logLevel: logLevel.WARN })
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    await producer.send({ topic, acks: -1, messages })
  } finally {
    await producer.disconnect()
  }
  console.log(`sent ${messages.length}`)
}

main().catch(error => {
  console.error(`send failed: ${error.message}`)
  process.exit(1)
})
