// The LangChain.js history and the worked gateway example, on the live stack (see client.test.ts).

import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, describe, it } from 'node:test'

import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'

import { TurnstreamClient } from '../src/index.js'
import { TurnstreamChatMessageHistory, fromLangChain, toLangChain } from '../src/langchain.js'
import { checkingFetch } from './contract.js'

const url = process.env.TURNSTREAM_API_URL ?? ''
const token = process.env.TURNSTREAM_API_TOKEN ?? ''

describe('TurnstreamChatMessageHistory', () => {
  let client: TurnstreamClient
  before(async () => { client = new TurnstreamClient({ url, token, fetch: (await checkingFetch(url)).fetch }) })

  it('converts tool calls both ways without losing their pairing', () => {
    const call = new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'weather', args: { city: 'Lisbon' }, type: 'tool_call' }] })
    const chat = fromLangChain(call)
    assert.deepEqual(chat, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Lisbon"}' } }] })
    const back = toLangChain(chat) as AIMessage
    assert.deepEqual(back.tool_calls?.map(c => [c.id, c.name, c.args]), [['c1', 'weather', { city: 'Lisbon' }]])
    assert.deepEqual(fromLangChain(new ToolMessage({ content: '21 C', tool_call_id: 'c1' })), { role: 'tool', content: '21 C', tool_call_id: 'c1' })
  })

  it('adds messages as turns, reads them back from the context, and clears the session', async () => {
    const session = `lc-${randomUUID().slice(0, 8)}`
    const history = new TurnstreamChatMessageHistory({ client, sessionId: session, userId: `lc-user-${session}`, timeoutSeconds: 30 })
    await history.addMessages([new HumanMessage('I want to visit Porto.'), new AIMessage('Porto it is.')])
    await history.addMessage(new HumanMessage('In May, please.'))
    const messages = await history.getMessages()
    assert.deepEqual(messages.map(m => [m.getType(), m.content]), [['human', 'I want to visit Porto.'], ['ai', 'Porto it is.'], ['human', 'In May, please.']])
    await history.clear()
    assert.deepEqual(await history.getMessages(), [])
    await history.clear() // nothing left to erase is no error
  })

  it('runs the worked gateway example', async () => {
    // @ts-expect-error: the example is plain JavaScript, without types
    const { onUserMessage } = await import('../../examples/gateway.mjs')
    const session = `gw-${randomUUID().slice(0, 8)}`
    const first = await onUserMessage(client, { session, user: `gw-user-${session}`, text: 'My budget is 3500 EUR.' })
    assert.equal(first.fresh, true)
    assert.equal(first.answer, '(echo) My budget is 3500 EUR.')
    const second = await onUserMessage(client, { session, user: `gw-user-${session}`, text: 'What is my budget?' })
    assert.equal(second.fresh, true)
    assert.equal(second.messages, 4) // the first exchange, then the new question: the context had both turns
    const context = await client.context(session)
    assert.deepEqual(context?.messages.map(m => m.role), ['user', 'assistant', 'user', 'assistant'])
  })
})
