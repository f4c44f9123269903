// TurnstreamClient: turnstream's HTTP API (`turnstream serve`) on the platform's fetch; no dependencies.

import { ClientError, NotFound, RecordTimeout, Unavailable, errorFor } from './errors.js'
import type { ContextDoc, EraseReply, ErrorReply, Prompt, RecordReply, SearchReply, Turn, TurnInput } from './types.js'

export interface ClientOptions {
  /** Where `turnstream serve` listens, e.g. http://127.0.0.1:8780 */
  url: string
  /** The tenant's bearer token. */
  token?: string
  /** A fetch to use instead of the global one (a proxy, a test's checking fetch). */
  fetch?: typeof fetch
  /** Milliseconds a request may take beyond the server-side wait it asks for (default 10,000). */
  timeoutMs?: number
}

export interface PromptOptions {
  userId?: string
  budgetTokens?: number
  k?: number
  /** false: look only, count nothing against the memory dedup window. */
  record?: boolean
  /** true: the prompt also says, per message, what it was drawn from (`sources`). */
  provenance?: boolean
}

export type SearchOptions = { k?: number, budgetTokens?: number } & ({ userId: string, sessionId?: undefined } | { sessionId: string, userId?: undefined })

const seg = (id: string): string => encodeURIComponent(id)

export class TurnstreamClient {
  private readonly url: string
  private readonly headers: Record<string, string>
  private readonly fetch: typeof fetch
  private readonly timeoutMs: number

  constructor (options: ClientOptions) {
    this.url = options.url.replace(/\/+$/, '')
    this.headers = { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) }
    this.fetch = options.fetch ?? globalThis.fetch
    this.timeoutMs = options.timeoutMs ?? 10_000
  }

  /** Record turns of one session and wait until its context includes the last; the version of that context.
   *  Throws RecordTimeout when the wait runs out (its `version` is the context's there is; its message says when
   *  no worker has applied a turn for a while). */
  async record (sessionId: string, turns: TurnInput | TurnInput[], options: { timeoutSeconds?: number } = {}): Promise<number> {
    const list = Array.isArray(turns) ? turns : [turns]
    const reply = await this.recordWait(sessionId, list, options)
    if (!reply.fresh) {
      const missing = reply.detail ? `in the context (${reply.detail})` : 'in the context'
      throw new RecordTimeout(sessionId, list[list.length - 1]?.turn_id ?? '', missing, reply.version)
    }
    return reply.version as number
  }

  /** As record, but a wait that runs out answers {fresh: false, version} instead of throwing. */
  async recordWait (sessionId: string, turns: TurnInput | TurnInput[], options: { timeoutSeconds?: number } = {}): Promise<RecordReply> {
    const list = (Array.isArray(turns) ? turns : [turns]).map(turn => ({ ...turn, session_id: turn.session_id ?? sessionId }) as Turn)
    const body: Record<string, unknown> = { turns: list }
    if (options.timeoutSeconds !== undefined) body.timeout_seconds = options.timeoutSeconds
    try {
      return await this.call<RecordReply>('POST', `/v1/sessions/${seg(sessionId)}/turns`, body, undefined, (options.timeoutSeconds ?? 10) * 1000)
    } catch (error) {
      if (error instanceof Unavailable && error.acknowledged === false && error.reply?.detail.includes('acknowledge')) {
        throw new RecordTimeout(sessionId, list[list.length - 1]?.turn_id ?? '', 'acknowledged by the broker', undefined, error.status, error.reply)
      }
      throw error
    }
  }

  /** The prompt for the session's next model call: its compacted context plus recalled memory, within a budget.
   *  An unknown session (new, erased, or another tenant's) gets the prompt of what there is, and nothing is created. */
  async prompt (sessionId: string, text: string, options: PromptOptions = {}): Promise<Prompt> {
    const body: Record<string, unknown> = { text }
    if (options.userId !== undefined) body.user_id = options.userId
    if (options.budgetTokens !== undefined) body.budget_tokens = options.budgetTokens
    if (options.k !== undefined) body.k = options.k
    if (options.record !== undefined) body.record = options.record
    if (options.provenance !== undefined) body.provenance = options.provenance
    return await this.call<Prompt>('POST', `/v1/sessions/${seg(sessionId)}/prompt`, body)
  }

  /** The session's context document, or null when it has none (never written, erased, expired, or another tenant's). */
  async context (sessionId: string, options: { userId?: string } = {}): Promise<ContextDoc | null> {
    const query = options.userId !== undefined ? { user_id: options.userId } : undefined
    try {
      return await this.call<ContextDoc>('GET', `/v1/sessions/${seg(sessionId)}/context`, undefined, query)
    } catch (error) {
      if (error instanceof NotFound) return null
      throw error
    }
  }

  /** What recall finds for `text` in a user's (or an anonymous session's) memories and archive; records nothing.
   *  An unknown user or session (or another tenant's) finds nothing: `{recalled: [], archived: []}`. */
  async search (text: string, options: SearchOptions): Promise<SearchReply> {
    const body: Record<string, unknown> = { text }
    if (options.userId !== undefined) body.user_id = options.userId
    if (options.sessionId !== undefined) body.session_id = options.sessionId
    if (options.k !== undefined) body.k = options.k
    if (options.budgetTokens !== undefined) body.budget_tokens = options.budgetTokens
    return await this.call<SearchReply>('POST', '/v1/search', body)
  }

  /** Erase a session (NotFound when there is nothing of it); a worker must be running to confirm. */
  async eraseSession (sessionId: string, options: { dryRun?: boolean } = {}): Promise<EraseReply> {
    return await this.call<EraseReply>('DELETE', `/v1/sessions/${seg(sessionId)}`, undefined, options.dryRun ? { dry_run: 'true' } : undefined, 60_000)
  }

  /** Erase a user: every session of theirs and all their long-term data (NotFound when there is nothing of them). */
  async eraseUser (userId: string, options: { dryRun?: boolean } = {}): Promise<EraseReply> {
    return await this.call<EraseReply>('DELETE', `/v1/users/${seg(userId)}`, undefined, options.dryRun ? { dry_run: 'true' } : undefined, 60_000)
  }

  private async call<T> (method: string, path: string, body?: unknown, query?: Record<string, string>, waitMs = 0): Promise<T> {
    const url = this.url + path + (query ? `?${new URLSearchParams(query).toString()}` : '')
    let response: Response
    try {
      response = await this.fetch(url, {
        method,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs + waitMs)
      })
    } catch (error) {
      throw new ClientError(`${method} ${path}: ${(error as Error).message}`)
    }
    const reply: unknown = await response.json().catch(() => undefined)
    if (response.ok) return reply as T
    throw errorFor(response.status, reply as ErrorReply | undefined, response.headers.get('retry-after'))
  }
}
