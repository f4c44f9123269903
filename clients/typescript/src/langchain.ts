// A LangChain.js chat message history on turnstream: reads the session's compacted context, records new messages
// as turns (waiting until the context has them), clears by erasing the session. Needs @langchain/core (a peer
// dependency: the core client imports none of it).

import { createHash } from 'node:crypto'

import { BaseListChatMessageHistory } from '@langchain/core/chat_history'
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'

import type { TurnstreamClient } from './client.js'
import { NotFound } from './errors.js'
import type { Message, TurnInput } from './types.js'

/** One chat message as its LangChain message; an assistant's tool calls with their arguments parsed. */
export function toLangChain (message: Message): BaseMessage {
  // content parts (images, files) are kept as their JSON text: the compacted context holds text turns
  const content = typeof message.content === 'string' ? message.content : message.content == null ? '' : JSON.stringify(message.content)
  switch (message.role) {
    case 'user': return new HumanMessage({ content, name: message.name })
    case 'system': return new SystemMessage({ content })
    case 'tool': return new ToolMessage({ content, tool_call_id: message.tool_call_id ?? '' })
    default: return new AIMessage({
      content,
      tool_calls: (message.tool_calls ?? []).map(call => ({ id: call.id, name: call.function.name, args: parsed(call.function.arguments), type: 'tool_call' as const }))
    })
  }
}

function parsed (text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : { input: text }
  } catch {
    return { input: text }
  }
}

/** A LangChain message as one chat message. */
export function fromLangChain (message: BaseMessage): Message {
  const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content)
  const type = message.getType()
  if (type === 'human') return { role: 'user', content }
  if (type === 'system') return { role: 'system', content }
  if (type === 'tool') return { role: 'tool', content, tool_call_id: (message as ToolMessage).tool_call_id }
  const calls = (message as AIMessage).tool_calls ?? []
  if (calls.length === 0) return { role: 'assistant', content }
  return {
    role: 'assistant',
    content: content === '' ? null : content,
    tool_calls: calls.map(call => ({ id: call.id ?? '', type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.args) } }))
  }
}

/** `seq` and a digest of the message, as the Python adapters number turns: a retry of the same write is the same turn. */
export function turnId (seq: number, message: Message): string {
  return `${seq}-${createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 16)}`
}

export interface HistoryOptions { client: TurnstreamClient, sessionId: string, userId?: string, timeoutSeconds?: number }

export class TurnstreamChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['turnstream', 'langchain']
  private readonly options: HistoryOptions

  constructor (options: HistoryOptions) {
    super()
    this.options = options
  }

  /** The session's compacted context as LangChain messages (what the model should get, not the whole history). */
  async getMessages (): Promise<BaseMessage[]> {
    const doc = await this.options.client.context(this.options.sessionId, { userId: this.options.userId })
    return (doc?.messages ?? []).map(toLangChain)
  }

  async addMessage (message: BaseMessage): Promise<void> {
    await this.addMessages([message])
  }

  /** Record the messages as the session's next turns, numbered from its context's version, and wait for them. */
  async addMessages (messages: BaseMessage[]): Promise<void> {
    const { client, sessionId, userId, timeoutSeconds } = this.options
    const first = (await client.context(sessionId, { userId }))?.version ?? 0
    const turns: TurnInput[] = messages.map((message, index) => {
      const chat = fromLangChain(message)
      return { turn_id: turnId(first + index, chat), seq: first + index, ts: Date.now() / 1000, message: chat, ...(userId ? { user_id: userId } : {}) }
    })
    if (turns.length > 0) await client.record(sessionId, turns, { timeoutSeconds })
  }

  /** Erase the session (its context, archive and memories taken from it); nothing to erase is no error. */
  async clear (): Promise<void> {
    try {
      await this.options.client.eraseSession(this.options.sessionId)
    } catch (error) {
      if (!(error instanceof NotFound)) throw error
    }
  }
}
