/**
 * A local location that cannot be created fails at once with a typed error. Node's recursive
 * mkdir never returns under `/proc` (procfs answers ENOENT to every mkdir, which Node takes as
 * "create the parent first", forever), so `DeltaTable.create('/proc/x/t')` used to hang.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { makeDirectories } from '../../src/storage/make-directories.js'
import { DeltaTable } from '../../src/table/delta-table.js'

let root: string
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-uncreatable-'))
})
after(() => rm(root, { recursive: true, force: true }))

/** Fails the test instead of hanging it when `p` does not settle in time. */
async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

function isTypedPathError(path: string) {
  return (err: unknown): boolean => {
    assert.ok(isDeltaError(err, 'DELTA_STORAGE_ERROR'), String(err))
    assert.equal(err.retryable, false)
    assert.ok(err.message.includes(path), err.message)
    assert.ok(err.hint !== undefined)
    return true
  }
}

describe('a location that cannot be created', () => {
  const procfs = process.platform === 'linux' ? false : 'procfs is Linux only'

  it('/proc/x/t fails fast with DELTA_STORAGE_ERROR', { skip: procfs }, async () => {
    const started = Date.now()
    await assert.rejects(
      within(10_000, DeltaTable.create('/proc/x/t', { schema: 'id long' })),
      isTypedPathError('/proc/x'),
    )
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`)
  })

  it('a path under a regular file fails fast with DELTA_STORAGE_ERROR', async () => {
    const file = join(root, 'file')
    await writeFile(file, 'x')
    await assert.rejects(
      within(10_000, DeltaTable.create(join(file, 'a', 't'), { schema: 'id long' })),
      isTypedPathError(file),
    )
    assert.ok((await stat(file)).isFile())
  })

  it('a scratch directory under /proc fails the first write fast, with a typed error', {
    skip: procfs,
  }, async () => {
    const dir = join(root, 'scratch-proc')
    const table = await DeltaTable.create(
      dir,
      { schema: 'id long' },
      { engineOptions: { scratchDir: '/proc/x/scratch' } },
    )
    try {
      await assert.rejects(within(10_000, table.append([{ id: 1n }])), (err: unknown) => {
        assert.ok(isDeltaError(err), String(err))
        assert.notEqual(err.code, 'DELTA_INTERNAL')
        return true
      })
    } finally {
      await table.close()
    }
  })
})

describe('makeDirectories', () => {
  it('creates every missing level, accepts an existing directory and concurrent callers', async () => {
    const deep = join(root, 'm', 'a', 'b', 'c')
    await Promise.all(Array.from({ length: 8 }, () => makeDirectories(deep)))
    assert.ok((await stat(deep)).isDirectory())
    await makeDirectories(deep)
    await mkdir(join(root, 'm', 'x'))
    await makeDirectories(join(root, 'm', 'x'))
  })

  it('fails with ENOTDIR under a regular file', async () => {
    const file = join(root, 'plain')
    await writeFile(file, '')
    await assert.rejects(makeDirectories(join(file, 'sub')), { code: 'ENOTDIR' })
  })
})
