// The API's bodies, as turnstream's OpenAPI document (/v1/openapi.json) describes them; the tests check every
// request and reply against that document, so these types and the server cannot drift apart unnoticed.

/** One OpenAI chat message. */
export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content?: string | null | Array<Record<string, unknown>>
  name?: string
  tool_calls?: Array<{ id: string, type: 'function', function: { name: string, arguments: string } }>
  tool_call_id?: string
  [extra: string]: unknown
}

/** One conversation turn; the tenant is the token's (a turn naming another one is refused as not found). */
export interface Turn {
  /** Idempotency key, unique within its session: a turn recorded twice is applied once. */
  turn_id: string
  session_id: string
  /** Owner of long-term memory. */
  user_id?: string | null
  /** Position in the session, from 0, when the gateway knows it. */
  seq?: number | null
  /** When it happened, epoch seconds. */
  ts?: number | null
  message: Message
  meta?: Record<string, unknown>
}

/** A turn as `record` takes it: the session id may be left out (the call names the session). */
export type TurnInput = Omit<Turn, 'session_id'> & { session_id?: string }

export interface ContextFact { type: string, text: string, [extra: string]: unknown }

/** A session's compacted context document. */
export interface ContextDoc {
  session_id: string
  tenant: string | null
  /** Grows with every state change; never moves back. */
  version: number
  last_turn_id: string
  updated_at: number
  /** Ready to send to a chat model. */
  messages: Message[]
  positions: Array<number | null>
  message_tokens: number[]
  language: string | null
  marker_index: number | null
  dropped: number
  summary: string
  facts: ContextFact[]
  tokens: { before: number, after: number, budget: number }
  timings: Record<string, number>
}

export interface RecalledMemory { id: string, type: 'fact' | 'preference' | 'event' | 'summary', text: string }

/** An archived turn, dated: `line` is what the memory block shows. */
export interface ArchivedTurn {
  id: string
  session: string
  position: number
  ts: number
  speaker: string | null
  role: string
  text: string
  score: number
  hit: boolean
  line: string
}

/** One thing a prompt message was drawn from: a turn by its position, the span the context left out (marker,
 *  summary), a fact and the turn it came from, the profile, a memory or an archived turn with its recall score. */
export interface Source {
  kind: 'turn' | 'marker' | 'summary' | 'fact' | 'profile' | 'memory' | 'archive' | 'question'
  session?: string
  position?: number
  /** First and last position of a span left out of the context. */
  positions?: number[]
  key?: string
  id?: string
  score?: number
}

/** What build_prompt returns: `messages` go to the model as they are. */
export interface Prompt {
  messages: Message[]
  recalled: RecalledMemory[]
  archived: ArchivedTurn[]
  skipped_recall: boolean
  /** Milliseconds: redis (the one round trip), assemble, total. */
  timings: Record<string, number>
  /** With `provenance: true`: per message, what it was drawn from. */
  sources?: Source[][]
}

/** 200 fresh, or 202 not fresh; `detail` on a 202 when no worker has applied a turn for a while (none runs). */
export interface RecordReply { fresh: boolean, version: number | null, detail?: string | null }
export interface SearchReply { recalled: RecalledMemory[], archived: ArchivedTurn[] }
export interface EraseReply { erased: string, dry_run: boolean, counts: Record<string, number> }

export interface ErrorReply {
  error: 'unauthorized' | 'not_found' | 'invalid_request' | 'too_large' | 'unavailable' | 'internal'
  detail: string
  field?: string | null
  acknowledged?: boolean | null
}
