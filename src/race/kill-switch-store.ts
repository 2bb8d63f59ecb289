/**
 * A store wrapper that lets a writer process kill itself right before or right after the put of
 * a log entry: the two moments where a crash decides whether a commit exists. Everything else
 * passes through untouched.
 */
import type { FileMeta, ObjectStore, PutOptions } from '../index.js'
import { passThroughStore } from '../subpaths/testing.js'

/** A put of a commit file (`_delta_log/<20 digits>.json`). */
const COMMIT_KEY = /^_delta_log\/\d{20}\.json$/

/** What the switch does on the next commit put. */
export type LogPutTrigger = 'before-log-put' | 'after-log-put'

/** A store that can fire a callback around the next commit put. */
export interface KillSwitchStore extends ObjectStore {
  /**
   * Arms the switch for the next commit put; `fire` is called before the put reaches the store
   * or after it returns (whatever its outcome), and is expected not to return.
   *
   * @param trigger - before or after the put
   * @param fire - the callback
   */
  arm(trigger: LogPutTrigger, fire: () => void): void
  /** Disarms the switch. */
  disarm(): void
}

/**
 * Wraps `inner` in a {@link KillSwitchStore}.
 *
 * @param inner - the store doing the work
 * @returns the wrapper
 */
export function createKillSwitchStore(inner: ObjectStore): KillSwitchStore {
  let armed: { trigger: LogPutTrigger; fire: () => void } | undefined
  const store: KillSwitchStore = {
    ...passThroughStore(inner),
    // biome-ignore lint/suspicious/noConfusingVoidType: a store written before puts reported metadata returns Promise<void>, and stays a valid store
    async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta | undefined | void> {
      const a = armed
      if (a === undefined || !COMMIT_KEY.test(key) || opts?.ifNotExists !== true) {
        return inner.put(key, data, opts)
      }
      armed = undefined
      if (a.trigger === 'before-log-put') a.fire()
      try {
        return await inner.put(key, data, opts)
      } finally {
        if (a.trigger === 'after-log-put') a.fire()
      }
    },
    arm(trigger, fire) {
      armed = { trigger, fire }
    },
    disarm() {
      armed = undefined
    },
  }
  return store
}
