/**
 * A new user's damaged tables: each corruption gives a typed error or the behaviour the
 * protocol mandates, never a bare TypeError.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DeltaTable } from '../../../src/table/delta-table.js'

const PROTOCOL = '{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}'
const METADATA =
  '{"metaData":{"id":"t1","format":{"provider":"parquet","options":{}},"schemaString":"{\\"type\\":\\"struct\\",\\"fields\\":[{\\"name\\":\\"id\\",\\"type\\":\\"long\\",\\"nullable\\":true,\\"metadata\\":{}}]}","partitionColumns":[],"configuration":{},"createdTime":1700000000000}}'
const add = (path: string) =>
  `{"add":{"path":"${path}","partitionValues":{},"size":100,"modificationTime":1700000000000,"dataChange":true}}`
const info = (op: string) => `{"commitInfo":{"timestamp":1700000000000,"operation":"${op}"}}`
const name = (v: number) => `${String(v).padStart(20, '0')}.json`

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** Writes a table whose commit v holds `commits[v]` (lines); undefined leaves the version out. */
async function tableWith(
  commits: Array<string[] | undefined>,
  extra: Record<string, string> = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-corrupt-'))
  roots.push(dir)
  await mkdir(join(dir, '_delta_log'), { recursive: true })
  for (const [v, lines] of commits.entries()) {
    if (lines) await writeFile(join(dir, '_delta_log', name(v)), `${lines.join('\n')}\n`)
  }
  for (const [file, text] of Object.entries(extra)) await writeFile(join(dir, '_delta_log', file), text)
  return dir
}

function rejectsWith(code: string, reason?: string) {
  return (err: unknown) => {
    assert.ok(!(err instanceof TypeError), `bare TypeError: ${String(err)}`)
    assert.equal((err as { code?: string }).code, code, String(err))
    if (reason) assert.equal((err as { reason?: string }).reason, reason, String(err))
    return true
  }
}

describe('damaged logs', () => {
  it('a truncated commit line is refused as a malformed commit naming the file', async () => {
    const dir = await tableWith([
      [info('CREATE'), PROTOCOL, METADATA],
      [info('WRITE'), add('a.parquet').slice(0, 40)],
    ])
    await assert.rejects(DeltaTable.open(dir), (err: unknown) => {
      rejectsWith('DELTA_INVALID_TABLE', 'malformed-commit')(err)
      assert.match(String((err as Error).message), /00000000000000000001\.json/)
      return true
    })
  })

  it('an unknown action kind is ignored, as the protocol requires', async () => {
    const dir = await tableWith([
      [info('CREATE'), PROTOCOL, METADATA, '{"futureAction":{"x":1}}', add('a.parquet')],
    ])
    const table = await DeltaTable.open(dir)
    try {
      const files = await (await table.snapshot()).files()
      assert.deepEqual(
        files.map((f) => f.path),
        ['a.parquet'],
      )
    } finally {
      await table.close()
    }
  })

  it('a line that is JSON but not an action object is refused', async () => {
    const dir = await tableWith([[info('CREATE'), PROTOCOL, METADATA, '[1,2,3]']])
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_INVALID_TABLE'))
  })

  it('a missing version in the middle is refused as non-contiguous', async () => {
    const dir = await tableWith([
      [info('CREATE'), PROTOCOL, METADATA],
      undefined,
      [info('WRITE'), add('b.parquet')],
    ])
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_INVALID_TABLE', 'versions-not-contiguous'))
  })

  it('a log without version 0 and without checkpoint is refused', async () => {
    const dir = await tableWith([undefined, [info('WRITE'), add('b.parquet')]])
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_INVALID_TABLE'))
  })

  it('a log without protocol or metadata is refused', async () => {
    await assert.rejects(
      DeltaTable.open(await tableWith([[info('CREATE'), METADATA]])),
      rejectsWith('DELTA_INVALID_TABLE', 'missing-protocol'),
    )
    await assert.rejects(
      DeltaTable.open(await tableWith([[info('CREATE'), PROTOCOL]])),
      rejectsWith('DELTA_INVALID_TABLE', 'missing-metadata'),
    )
  })

  it('an add path escaping the table root is refused', async () => {
    const dir = await tableWith([[info('CREATE'), PROTOCOL, METADATA, add('../outside/evil.parquet')]])
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_INVALID_TABLE', 'invalid-path'))
  })

  it('an empty or stale _last_checkpoint is only a hint: the listing wins', async () => {
    for (const hint of ['', '{"version":7,"size":3}', 'not json']) {
      const dir = await tableWith(
        [
          [info('CREATE'), PROTOCOL, METADATA],
          [info('WRITE'), add('a.parquet')],
        ],
        {
          _last_checkpoint: hint,
        },
      )
      const table = await DeltaTable.open(dir)
      try {
        assert.equal((await table.snapshot()).version, 1n, `hint ${JSON.stringify(hint)}`)
      } finally {
        await table.close()
      }
    }
  })

  it('a truncated checkpoint falls back to the JSON commits when they are all there', async () => {
    const dir = await tableWith([
      [info('CREATE'), PROTOCOL, METADATA],
      [info('WRITE'), add('a.parquet')],
    ])
    const table = await DeltaTable.open(dir)
    await table.checkpoint()
    await table.close()
    const cp = join(dir, '_delta_log', '00000000000000000001.checkpoint.parquet')
    const size = (await readFile(cp)).byteLength
    await truncate(cp, Math.floor(size / 2))
    const reopened = await DeltaTable.open(dir)
    try {
      const snap = await reopened.snapshot()
      assert.equal(snap.version, 1n)
      assert.equal(snap.logSegment.checkpoint, undefined)
      assert.deepEqual(
        (await snap.files()).map((f) => f.path),
        ['a.parquet'],
      )
    } finally {
      await reopened.close()
    }
  })

  it('a truncated checkpoint without the commits before it is refused as an invalid checkpoint', async () => {
    const dir = await tableWith([
      [info('CREATE'), PROTOCOL, METADATA],
      [info('WRITE'), add('a.parquet')],
    ])
    const table = await DeltaTable.open(dir)
    await table.checkpoint()
    await table.close()
    await rm(join(dir, '_delta_log', name(0)))
    await truncate(join(dir, '_delta_log', '00000000000000000001.checkpoint.parquet'), 10)
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_INVALID_TABLE', 'invalid-checkpoint'))
  })

  it('a folder without a log is TableNotFound', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-empty-'))
    roots.push(dir)
    await assert.rejects(DeltaTable.open(dir), rejectsWith('DELTA_TABLE_NOT_FOUND'))
    await assert.rejects(DeltaTable.open(join(dir, 'does-not-exist')), rejectsWith('DELTA_TABLE_NOT_FOUND'))
  })
})
