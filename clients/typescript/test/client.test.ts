// TurnstreamClient against a live `turnstream serve`, worker, Apache Kafka and Redis (started by
// tests/integration/serve/test_typescript_client.py, which passes their URLs and tokens in the environment).

import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, describe, it } from 'node:test'

import { ClientError, InvalidRequest, NotFound, RecordTimeout, TurnstreamClient, Unauthorized } from '../src/index.js'
import { checkingFetch, type Checked } from './contract.js'

const url = process.env.TURNSTREAM_API_URL ?? ''
const token = process.env.TURNSTREAM_API_TOKEN ?? ''
const otherToken = process.env.TURNSTREAM_OTHER_TOKEN ?? ''
const ids = (): [string, string] => { const tag = randomUUID().slice(0, 8); return [`node-s-${tag}`, `node-u-${tag}`] }
const turn = (id: string, text: string, userId?: string, role: 'user' | 'assistant' = 'user') =>
  ({ turn_id: id, ts: 1_700_000_000, message: { role, content: text }, ...(userId ? { user_id: userId } : {}) })

describe('TurnstreamClient', () => {
  let checked: Checked
  let client: TurnstreamClient
  let other: TurnstreamClient

  before(async () => {
    assert.ok(url && token && otherToken, 'TURNSTREAM_API_URL, TURNSTREAM_API_TOKEN and TURNSTREAM_OTHER_TOKEN must be set')
    checked = await checkingFetch(url)
    client = new TurnstreamClient({ url, token, fetch: checked.fetch })
    other = new TurnstreamClient({ url, token: otherToken, fetch: checked.fetch })
  })

  it('records turns, then reads the context, a prompt within a budget and a search', async () => {
    const [session, user] = ids()
    const version = await client.record(session, [
      turn('t1', 'Hello, I am planning a trip to Lisbon.', user),
      turn('t2', 'Lovely! What is your budget?', undefined, 'assistant'),
      turn('t3', 'My budget is 3500 EUR for the week.', user)
    ], { timeoutSeconds: 30 })
    assert.ok(version >= 1)
    const doc = await client.context(session, { userId: user })
    assert.equal(doc?.version, version)
    assert.equal(doc?.tenant, 'acme')
    assert.equal(doc?.last_turn_id, 't3')

    const prompt = await client.prompt(session, 'What was my budget?', { userId: user, record: false })
    assert.deepEqual(prompt.messages.at(-1), { role: 'user', content: 'What was my budget?' })
    assert.ok(prompt.recalled.some(memory => memory.text.includes('3500 EUR')))
    const small = await client.prompt(session, 'What was my budget?', { userId: user, budgetTokens: 64 })
    assert.ok(small.messages.length < prompt.messages.length)
    assert.equal(prompt.sources, undefined)  // not asked for: the reply is as it was
    const traced = await client.prompt(session, 'What was my budget?', { userId: user, record: false, provenance: true })
    assert.equal(traced.sources?.length, traced.messages.length)
    assert.deepEqual(traced.sources?.at(-1), [{ kind: 'question' }])
    const budgetTurn = traced.messages.findIndex(m => m.role === 'user' && m.content === 'My budget is 3500 EUR for the week.')
    assert.deepEqual(traced.sources?.[budgetTurn], [{ kind: 'turn', session: `acme:${session}`, position: 2 }])

    const found = await client.search('Lisbon trip', { userId: user })
    assert.ok(found.archived.some(t => t.hit && t.text.includes('Lisbon') && t.session === `acme:${session}`))
  })

  it('sees nothing of another tenant: its sessions read as unknown', async () => {
    const [session, user] = ids()
    await client.record(session, turn('t1', 'My code word is PELICAN.', user), { timeoutSeconds: 30 })
    assert.equal(await other.context(session), null)
    assert.deepEqual(await other.search('code word', { userId: user }), { recalled: [], archived: [] })
    await assert.rejects(other.eraseUser(user), NotFound)
    assert.ok(!JSON.stringify(await other.prompt(session, 'What is my code word?', { userId: user })).includes('PELICAN'))
    assert.ok(JSON.stringify((await client.context(session))?.messages).includes('PELICAN'))
  })

  it('names what is wrong with the error classes of the Python SDK', async () => {
    const [session] = ids()
    const loose = new TurnstreamClient({ url, token, fetch: checked.repliesOnly })
    const bad = loose.record(session, { turn_id: 't1', message: { role: 'bogus' as 'user', content: 'x' } })
    await assert.rejects(bad, (error: unknown) => error instanceof InvalidRequest && error instanceof ClientError &&
      error.status === 422 && error.field === 'turns.0.message')
    await assert.rejects(new TurnstreamClient({ url, token: 'wrong-token-0123456789', fetch: checked.fetch }).context(session), Unauthorized)
    await assert.rejects(client.eraseSession(`never-${session}`), NotFound)
    const elsewhere = loose.record(session, { turn_id: 't1', session_id: `other-${session}`, message: { role: 'user', content: 'x' } })
    await assert.rejects(elsewhere, (error: unknown) => error instanceof InvalidRequest && error.field === 'turns.0.session_id')
  })

  it('answers an unknown session or user one way per call, and a prompt creates nothing for it', async () => {
    const [session, user] = ids()
    const question = 'What is my code word?'
    for (let n = 0; n < 2; n++) {
      assert.deepEqual((await client.prompt(session, question, { userId: user })).messages, [{ role: 'user', content: question }])
    }
    assert.deepEqual(await client.search('code word', { userId: user }), { recalled: [], archived: [] })
    assert.equal(await client.context(session), null)
    await assert.rejects(client.eraseSession(session, { dryRun: true }), NotFound)  // the prompts left nothing behind
    await assert.rejects(client.eraseUser(user, { dryRun: true }), NotFound)
  })

  it('throws RecordTimeout with the version there is when the wait runs out', async () => {
    const [session] = ids()
    await client.record(session, turn('t1', 'first'), { timeoutSeconds: 30 })
    await client.eraseSession(session)  // the worker now drops the session's turns while its forget marker lives
    const reply = await client.recordWait(session, turn('t2', 'second'), { timeoutSeconds: 1 })
    assert.deepEqual(reply, { fresh: false, version: null, detail: null })  // a worker runs: behind, not absent
    await assert.rejects(client.record(session, turn('t3', 'third'), { timeoutSeconds: 1 }),
      (error: unknown) => error instanceof RecordTimeout && error instanceof ClientError && error.version === null && error.turnId === 't3')
  })

  it('erases a user: what it showed is gone', async () => {
    const [session, user] = ids()
    await client.record(session, turn('t1', 'I live in Porto with my dog Rex.', user), { timeoutSeconds: 30 })
    const dry = await client.eraseUser(user, { dryRun: true })
    assert.equal(dry.dry_run, true)
    assert.equal(dry.counts.contexts, 1)
    const erased = await client.eraseUser(user)
    assert.equal(erased.erased, `user acme:${user}`)
    assert.equal(await client.context(session), null)
    await client.prompt(session, 'Where do I live?', { userId: user })  // records nothing: the session is gone
    await assert.rejects(client.eraseUser(user, { dryRun: true }), NotFound)
    await assert.rejects(client.eraseSession(session, { dryRun: true }), NotFound)
  })

  it('checked every request and reply against the served document', () => {
    assert.ok(checked.count() > 20, `only ${checked.count()} bodies checked`)
  })
})
