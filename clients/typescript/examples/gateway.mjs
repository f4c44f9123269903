// A Node chat gateway on turnstream: record the user's turn, build the prompt (compacted context + recalled
// memory, one Redis round trip on the server), call the model, record its answer.
//
//   TURNSTREAM_API_URL=http://127.0.0.1:8780 TURNSTREAM_API_TOKEN=... node examples/gateway.mjs
//   curl -s localhost:3000/chat -d '{"session":"s-7","user":"maya","text":"My budget is 3500 EUR."}'
//
// With OPENAI_BASE_URL set the model is any OpenAI-compatible chat endpoint; without it the gateway echoes.
import { createServer } from 'node:http'
import { randomUUID } from 'node:crypto'

import { RecordTimeout, TurnstreamClient } from '@turnstream/client'

async function callModel (messages) {
  if (!process.env.OPENAI_BASE_URL) return `(echo) ${messages.at(-1).content}`
  const reply = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ''}` },
    body: JSON.stringify({ model: process.env.MODEL ?? 'gpt-4o-mini', messages })
  })
  return (await reply.json()).choices[0].message.content
}

/** One user message: recorded, answered from the prompt turnstream builds, the answer recorded too. */
export async function onUserMessage (turnstream, { session, user, text }) {
  const turn = { turn_id: randomUUID(), user_id: user, ts: Date.now() / 1000, message: { role: 'user', content: text } }
  let fresh = true
  try {
    await turnstream.record(session, turn, { timeoutSeconds: 5 }) // read-your-writes: the context has the turn
  } catch (error) {
    if (!(error instanceof RecordTimeout)) throw error
    fresh = false // the worker is behind: answer from the context as it is
  }
  const prompt = await turnstream.prompt(session, text, { userId: user })
  const answer = await callModel(prompt.messages)
  await turnstream.recordWait(session, { turn_id: randomUUID(), ts: Date.now() / 1000, message: { role: 'assistant', content: answer } })
  return { answer, fresh, messages: prompt.messages.length, recalled: prompt.recalled.map(m => m.text) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const turnstream = new TurnstreamClient({ url: process.env.TURNSTREAM_API_URL, token: process.env.TURNSTREAM_API_TOKEN })
  createServer(async (request, response) => {
    let body = ''
    for await (const chunk of request) body += chunk
    try {
      const reply = await onUserMessage(turnstream, JSON.parse(body))
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply))
    } catch (error) {
      response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: String(error) }))
    }
  }).listen(Number(process.env.PORT ?? 3000), '127.0.0.1')
}
