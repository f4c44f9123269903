export { TurnstreamClient } from './client.js'
export type { ClientOptions, PromptOptions, SearchOptions } from './client.js'
export { ClientError, InvalidRequest, NotFound, RecordTimeout, Unauthorized, Unavailable } from './errors.js'
export type * from './types.js'
