/**
 * Opens a table and counts its rows, then prints one JSON line: `{"rows": n, "version": v}` or
 * `{"code": ..., "message": ..., "path": ...}` for a DeltaError, `{"untyped": ...}` for any
 * other error; every line also carries `maxRssMb`, the process's peak resident memory. The hostile-log tests run it in a child with a small heap, so a read whose memory
 * is not bounded fails the test instead of eating the machine.
 *
 * Usage: node --max-old-space-size=N --import tsx hostile-read-worker.ts <table root>
 */
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const root = process.argv[2] as string

function report(result: Record<string, unknown>): void {
  const maxRssMb = Math.round(process.resourceUsage().maxRSS / 1024)
  process.stdout.write(`${JSON.stringify({ ...result, maxRssMb })}\n`)
}

try {
  const table = await DeltaTable.open(root)
  try {
    const version = (await table.snapshot()).version
    const rows = await table.scan().count()
    const listed = (await table.scan().toArray()).length
    report({ rows, listed, version: String(version) })
  } finally {
    await table.close()
  }
} catch (err) {
  if (isDeltaError(err)) {
    const e = err as Error & { code: string; details?: unknown; path?: string }
    report({ code: e.code, message: e.message, path: e.path })
  } else {
    report({ untyped: String(err) })
  }
}
