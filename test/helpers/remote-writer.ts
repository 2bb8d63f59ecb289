/**
 * One writer process of the multi-host tests: it opens a remote table by URL (credentials from
 * `AZURE_STORAGE_CONNECTION_STRING`, never from its arguments), waits for a common start time,
 * then alternates deleting one of its own rows of the shared initial file and appending rows of
 * its own, each as one commit with every reconciliation on. It prints one JSON line: the commits
 * it was acknowledged and the attempts that aborted.
 *
 * Run as `node --import tsx remote-writer.ts '<json task>'`.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DeltaTable } from '../../src/table/delta-table.js'

/** What a writer is told to do. */
export interface RemoteWriterTask {
  readonly location: string
  /** 0-based; the writer owns ids `[writer * rowsPerWriter, (writer + 1) * rowsPerWriter)` of the initial file. */
  readonly writer: number
  readonly rowsPerWriter: number
  /** Operations to commit. */
  readonly ops: number
  /** Epoch ms at which every writer starts. */
  readonly startAt: number
}

/** One acknowledged commit. */
export interface AckedCommit {
  readonly kind: 'append' | 'delete'
  readonly version: number
  readonly txnId: string
  /** Ids appended, or the id deleted. */
  readonly ids: readonly number[]
  readonly reconciliations: readonly string[]
}

/** What a writer reports. */
export interface RemoteWriterReport {
  readonly writer: number
  readonly acked: readonly AckedCommit[]
  /** Codes of attempts that failed and were tried again. */
  readonly aborted: readonly string[]
}

/** First id of the rows writer `w` appends. */
export function appendBase(writer: number): number {
  return 1_000_000 + writer * 10_000
}

const ROWS_PER_APPEND = 5
const TRIES = 8

async function main(task: RemoteWriterTask): Promise<RemoteWriterReport> {
  const table = await DeltaTable.open(task.location, { conflicts: 'all' })
  const acked: AckedCommit[] = []
  const aborted: string[] = []
  try {
    await new Promise((r) => setTimeout(r, Math.max(0, task.startAt - Date.now())))
    for (let op = 0; op < task.ops; op++) {
      const kind = op % 2 === 0 ? 'delete' : 'append'
      const ids =
        kind === 'delete'
          ? [task.writer * task.rowsPerWriter + op / 2]
          : Array.from(
              { length: ROWS_PER_APPEND },
              (_, i) => appendBase(task.writer) + op * ROWS_PER_APPEND + i,
            )
      for (let attempt = 1; ; attempt++) {
        try {
          const result =
            kind === 'delete'
              ? await table.delete(`id = ${ids[0]}`)
              : await table.append(ids.map((id) => ({ id: BigInt(id), owner: task.writer })))
          acked.push({
            kind,
            version: Number(result.version),
            txnId: result.txnId,
            ids,
            reconciliations: result.reconciliations.map((r) => r.kind),
          })
          break
        } catch (err) {
          const code = (err as { code?: string }).code ?? String(err)
          // Only a typed conflict is tried again: the outcome of anything else would be unknown.
          if (!code.startsWith('DELTA_CONCURRENT') || attempt >= TRIES) throw err
          aborted.push(code)
        }
      }
    }
  } finally {
    await table.close()
  }
  return { writer: task.writer, acked, aborted }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const report = await main(JSON.parse(process.argv[2] as string) as RemoteWriterTask)
  process.stdout.write(`${JSON.stringify(report)}\n`)
}
