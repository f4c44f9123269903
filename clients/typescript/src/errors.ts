// The client's errors, named as the Python SDK's (turnstream/client/errors.py): a gateway catches ClientError
// for all of them, and RecordTimeout when a turn is not in the context in time.

import type { ErrorReply } from './types.js'

/** Base of every error this client raises; `status` and `reply` are the API's when it answered. */
export class ClientError extends Error {
  readonly status: number | undefined
  readonly reply: ErrorReply | undefined

  constructor (message: string, status?: number, reply?: ErrorReply) {
    super(message)
    this.name = new.target.name
    this.status = status
    this.reply = reply
  }
}

/** A recorded turn was not acknowledged by the broker, or not in the session's context, in time. */
export class RecordTimeout extends ClientError {
  readonly sessionId: string
  readonly turnId: string
  /** The version of the context there is (null while the session has none); undefined when not acknowledged. */
  readonly version: number | null | undefined

  constructor (sessionId: string, turnId: string, missing: string, version?: number | null, status?: number, reply?: ErrorReply) {
    super(`session ${JSON.stringify(sessionId)}: turn ${JSON.stringify(turnId)} not ${missing} in time`, status, reply)
    this.sessionId = sessionId
    this.turnId = turnId
    this.version = version
  }
}

/** 401: no valid token. */
export class Unauthorized extends ClientError {}

/** 404: no such session or user for this token's tenant. */
export class NotFound extends ClientError {}

/** 422 (or 413): the request is malformed; `field` names the culprit (`turns.0.message`). */
export class InvalidRequest extends ClientError {
  get field (): string | undefined { return this.reply?.field ?? undefined }
}

/** 503: the broker or Redis is away; retry after `retryAfterSeconds` (recording again with the same turn ids is safe). */
export class Unavailable extends ClientError {
  readonly retryAfterSeconds: number | undefined

  constructor (message: string, status: number, reply: ErrorReply | undefined, retryAfterSeconds: number | undefined) {
    super(message, status, reply)
    this.retryAfterSeconds = retryAfterSeconds
  }

  /** For a record: whether the broker had acknowledged every turn. */
  get acknowledged (): boolean | undefined { return this.reply?.acknowledged ?? undefined }
}

/** The error for a reply of status `status` with body `reply`. */
export function errorFor (status: number, reply: ErrorReply | undefined, retryAfter: string | null): ClientError {
  const message = `${status} ${reply?.error ?? 'error'}: ${reply?.detail ?? 'no detail'}`
  if (status === 401) return new Unauthorized(message, status, reply)
  if (status === 404) return new NotFound(message, status, reply)
  if (status === 413 || status === 422) return new InvalidRequest(message, status, reply)
  if (status === 503) {
    const seconds = retryAfter === null ? undefined : Number(retryAfter)
    return new Unavailable(message, status, reply, Number.isFinite(seconds) ? seconds : undefined)
  }
  return new ClientError(message, status, reply)
}
