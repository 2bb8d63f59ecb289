/**
 * An input that is a stream rather than a regular file (a FIFO, `/dev/stdin`) is read as a
 * stream, to its end, by the CLI's `append` and by `appendFile`: a stream's size is 0, and it
 * used to be refused as "empty".
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { constants, createWriteStream } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** A FIFO that `text` is written into once a reader opens it. */
async function fifo(
  dir: string,
  name: string,
  text: string,
): Promise<{ path: string; release(): Promise<void> }> {
  const path = join(dir, name)
  await promisify(execFile)('mkfifo', [path])
  const writer = createWriteStream(path)
  const written = new Promise<void>((resolve) => {
    writer.on('close', resolve)
    writer.on('error', () => resolve())
  })
  writer.end(text)
  return {
    path,
    // Unblocks the writer when the reader never opened the FIFO (a failed test).
    async release() {
      const h = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
      await h.close()
      await written
    },
  }
}

describe('input from a stream', () => {
  it('append FIFO --format csv and --format json read the whole stream (CLI)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-streams-'))
    roots.push(root)
    const location = join(root, 't')
    assert.equal(
      (await runCliInProcess(['create', location, '--schema', 'id long, d decimal(10,2)'])).code,
      0,
    )
    const csv = await fifo(root, 'rows-csv', 'id,d\n1,1.25\n2,2.50\n')
    const json = await fifo(root, 'rows-json', '{"id":3,"d":3.75}\n')
    try {
      const a = await runCliInProcess(['append', location, csv.path, '--format', 'csv'])
      assert.equal(a.code, 0, a.stderr)
      const b = await runCliInProcess(['append', location, json.path, '--format', 'json'])
      assert.equal(b.code, 0, b.stderr)
    } finally {
      await csv.release()
      await json.release()
    }
    const table = await DeltaTable.open(location)
    try {
      const rows = (await table.scan().toArray()).sort((x, y) => Number(x.id) - Number(y.id))
      assert.deepEqual(rows, [
        { id: 1n, d: '1.25' },
        { id: 2n, d: '2.50' },
        { id: 3n, d: '3.75' },
      ])
    } finally {
      await table.close()
    }
  })

  it('appendFile reads a FIFO as a stream', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-streams-'))
    roots.push(root)
    const table = await DeltaTable.create(join(root, 't'), { schema: 'id long' })
    const rows = await fifo(root, 'rows', `id\n${Array.from({ length: 5000 }, (_, i) => i).join('\n')}\n`)
    try {
      await table.appendFile(rows.path, { format: 'csv' })
      assert.equal(await table.scan().count(), 5000)
    } finally {
      await rows.release()
      await table.close()
    }
  })

  it('an empty FIFO is refused as empty', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-streams-'))
    roots.push(root)
    const location = join(root, 't')
    assert.equal((await runCliInProcess(['create', location, '--schema', 'id long'])).code, 0)
    const empty = await fifo(root, 'empty', '')
    try {
      const r = await runCliInProcess(['append', location, empty.path, '--format', 'csv'])
      assert.equal(r.code, 3, r.stderr)
      assert.match(r.stderr, /The input file .*empty is empty/)
    } finally {
      await empty.release()
    }
  })
})
