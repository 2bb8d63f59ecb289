/**
 * The in-memory model the verifier replays committed operations on: a map from key to row, plus
 * when and how each key was inserted, which the WriteSerializable rule needs.
 */
import type { PlannedOp, RaceRow } from './plan.js'

/** Where a committed operation sits in the log. */
export interface CommitPosition {
  /** The version it landed as. */
  readonly version: number
  /** The version its transaction read. */
  readonly readVersion: number
  /** Whether the commit is a blind append (`commitInfo.isBlindAppend`). */
  readonly blindAppend: boolean
  /** The isolation level it committed under (`commitInfo.isolationLevel`). */
  readonly isolationLevel: string | undefined
}

/** What replaying one operation did to the model. */
export interface ReplayEffect {
  readonly inserted: number
  readonly updated: number
  readonly deleted: number
  /** Keys the operation would insert although they are already present (a duplicate insert). */
  readonly duplicateInserts: readonly number[]
  /** Keys a concurrent blind append made invisible to this DML (the WriteSerializable rule). */
  readonly hidden: readonly number[]
}

interface Birth {
  readonly version: number
  readonly blind: boolean
}

/**
 * A table of race rows keyed by id, replayed one committed operation at a time.
 *
 * The order is commit order with one relaxation, the WriteSerializable one: a blind append may be
 * serialized after DML that ran concurrently with it, so a DML whose transaction read version
 * `r` and committed as `c` does not act on rows a blind append inserted at a version strictly
 * between `r` and `c`. Serializable commits get no relaxation.
 */
export class RaceModel {
  readonly #rows = new Map<number, RaceRow>()
  readonly #births = new Map<number, Birth>()

  /**
   * A model holding `rows` (the initial table, inserted at `version`).
   *
   * @param rows - the initial rows
   * @param version - the version that holds them
   */
  constructor(rows: Iterable<RaceRow>, version: number) {
    for (const r of rows) {
      this.#rows.set(r.id, r)
      this.#births.set(r.id, { version, blind: false })
    }
  }

  /** The number of live rows. */
  get size(): number {
    return this.#rows.size
  }

  /**
   * The live row of a key.
   *
   * @param id - the key
   * @returns the row, or undefined
   */
  get(id: number): RaceRow | undefined {
    return this.#rows.get(id)
  }

  /**
   * The version that inserted a key's live row (the initial version for the initial rows): two
   * reads that see the same one see the same row, whose stable row id must not change.
   *
   * @param id - the key
   * @returns the version, or undefined when the key is not live
   */
  birthOf(id: number): number | undefined {
    return this.#births.get(id)?.version
  }

  /** The live rows, by ascending key. */
  rows(): RaceRow[] {
    return [...this.#rows.values()].sort((a, b) => a.id - b.id)
  }

  /**
   * Applies one committed operation.
   *
   * @param op - the planned operation
   * @param at - where it committed
   * @returns what it changed
   */
  apply(op: PlannedOp, at: CommitPosition): ReplayEffect {
    let inserted = 0
    let updated = 0
    let deleted = 0
    const duplicateInserts: number[] = []
    const hidden: number[] = []
    const relaxed = at.isolationLevel !== 'Serializable'
    const visible = (id: number): boolean => {
      if (!this.#rows.has(id)) return false
      const birth = this.#births.get(id)
      const concurrentBlind =
        relaxed && birth?.blind === true && birth.version > at.readVersion && birth.version < at.version
      if (concurrentBlind) hidden.push(id)
      return !concurrentBlind
    }
    const insert = (row: RaceRow): void => {
      if (this.#rows.has(row.id)) duplicateInserts.push(row.id)
      this.#rows.set(row.id, row)
      this.#births.set(row.id, { version: at.version, blind: at.blindAppend })
      inserted++
    }
    switch (op.kind) {
      case 'append':
        for (const id of op.keys) insert({ id, val: 1, tag: op.tag })
        break
      case 'delete':
        for (const id of op.keys) {
          if (!visible(id)) continue
          this.#rows.delete(id)
          this.#births.delete(id)
          deleted++
        }
        break
      case 'update':
        for (const id of op.keys) {
          const row = visible(id) ? this.#rows.get(id) : undefined
          if (row === undefined) continue
          this.#rows.set(id, { id, val: row.val + op.delta, tag: op.tag })
          updated++
        }
        break
      case 'merge':
        for (const id of op.keys) {
          const row = visible(id) ? this.#rows.get(id) : undefined
          if (row === undefined) {
            if (!this.#rows.has(id)) insert({ id, val: op.delta, tag: op.tag })
            continue
          }
          this.#rows.set(id, { id, val: row.val + op.delta, tag: op.tag })
          updated++
        }
        break
      case 'merge-insert': {
        // The NOT MATCHED BY SOURCE clause first: it acts on the snapshot, before the inserts.
        const source = new Set(op.keys)
        for (const [id, row] of [...this.#rows]) {
          if (source.has(id) || row.tag !== op.bySourceTag || !visible(id)) continue
          this.#rows.set(id, { id, val: row.val + op.delta, tag: op.updatedTag })
          updated++
        }
        for (const id of op.keys) {
          const row = visible(id) ? this.#rows.get(id) : undefined
          if (row === undefined) {
            if (!this.#rows.has(id)) insert({ id, val: op.delta, tag: op.tag })
            continue
          }
          this.#rows.set(id, { id, val: row.val + op.delta, tag: op.tag })
          updated++
        }
        break
      }
      case 'optimize':
      case 'zorder':
      case 'vacuum':
        break
    }
    return { inserted, updated, deleted, duplicateInserts, hidden }
  }
}
