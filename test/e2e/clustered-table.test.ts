/**
 * Clustered tables (PROTOCOL.md "Clustered Table"): `create({ clusterBy })` writes the
 * `clustering` writer feature (with `domainMetadata`) and the `delta.clustering` domain; appends,
 * UPDATE, MERGE and DELETE write unclustered files (no `clusteringProvider`) with statistics for
 * the clustering columns; OPTIMIZE clusters by the clustering columns on the Z-order curve,
 * marks its files with its provider, records `clusterBy` as Delta does, keeps row ids, and
 * refuses `zOrderBy`. The Databricks fixture (legacy `liquid` feature) is appended to, updated
 * and optimized with its row ids kept.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isDeltaError } from '../../src/errors/index.js'
import type { Action, AddFile } from '../../src/protocol/actions.js'
import {
  CLUSTERING_DOMAIN,
  CLUSTERING_PROVIDER,
  clusteringOf,
  LEGACY_CLUSTERING_DOMAIN,
} from '../../src/protocol/clustering.js'
import { parseStats } from '../../src/protocol/stats.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { addsOf, commitActions, commitInfoOf, type Row, readParquet, removesOf } from './ops-support.js'

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..')
const FIXTURE = resolve(repoRoot, '../shared/fixtures/row-tracking/table_with_liquid_clustering')
const FIXTURE_SKIP = existsSync(join(FIXTURE, '_delta_log'))
  ? false
  : `row-tracking fixture not found at ${FIXTURE}`

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-clustered-'))
  roots.push(root)
  return root
}

const SCHEMA = 'id long not null, x int, y int, flag boolean, note string'

async function createClustered(properties: Record<string, string> = {}): Promise<DeltaTable> {
  return DeltaTable.create(join(await tempDir(), 't'), {
    schema: SCHEMA,
    clusterBy: ['x', 'y'],
    properties,
  })
}

/** Rows spread over x and y so that clustering really permutes them. */
function rows(from: number, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i
    return { id: BigInt(k), x: (k * 37) % 101, y: (k * 53) % 89, flag: k % 2 === 0, note: `n${k}` }
  })
}

function byId(rs: readonly Row[]): Row[] {
  return [...rs].sort((a, b) => Number((a.id as bigint) - (b.id as bigint)))
}

async function live(table: DeltaTable): Promise<Row[]> {
  return byId(await table.scan().toArray())
}

function domainsOf(actions: readonly Action[]) {
  return actions.flatMap((a) => ('domainMetadata' in a ? [a.domainMetadata] : []))
}

/** The ids of every output file of a commit, in physical order, file by file (by path). */
async function outputIdOrder(location: string, adds: readonly AddFile[]): Promise<bigint[][]> {
  const out: bigint[][] = []
  for (const a of [...adds].sort((p, q) => (p.path < q.path ? -1 : 1))) {
    out.push((await readParquet(join(location, a.path), ['id'])).map((r) => r.id as bigint))
  }
  return out
}

describe('create with clusterBy', () => {
  it('writes the clustering and domainMetadata writer features, the delta.clustering domain with physical column paths, and clusterBy in commitInfo', async () => {
    const table = await createClustered()
    try {
      const actions = await commitActions(table.location, 0)
      const protocol = actions.flatMap((a) => ('protocol' in a ? [a.protocol] : []))[0]
      assert.ok(protocol)
      assert.equal(protocol.minWriterVersion, 7)
      assert.ok(protocol.writerFeatures?.includes('clustering'))
      assert.ok(protocol.writerFeatures?.includes('domainMetadata'))
      assert.ok(!protocol.readerFeatures?.includes('clustering'), 'clustering is a writer feature')
      const [domain, ...more] = domainsOf(actions)
      assert.equal(more.length, 0)
      assert.deepEqual(domain, {
        domain: CLUSTERING_DOMAIN,
        configuration: '{"clusteringColumns":[["x"],["y"]]}',
        removed: false,
      })
      const info = commitInfoOf(actions)
      assert.equal(info.operationParameters?.clusterBy, '["x","y"]')
      const metadata = actions.flatMap((a) => ('metaData' in a ? [a.metaData] : []))[0]
      assert.ok(metadata)
      assert.ok(
        !Object.keys(metadata.configuration).some((k) => k.startsWith('delta.feature.')),
        'no feature key in the configuration',
      )
      const clustering = clusteringOf(await table.snapshot())
      assert.deepEqual(clustering?.columns, ['x', 'y'])
      assert.equal(clustering?.feature, 'clustering')
    } finally {
      await table.close()
    }
  })

  it('refuses a partitioned clustered table, unknown, repeated, boolean and too many columns, and the feature set by hand; no table is created', async () => {
    const dir = await tempDir()
    const cases: [string, Parameters<typeof DeltaTable.create>[1], RegExp][] = [
      [
        'partitioned',
        { schema: SCHEMA, partitionBy: ['x'], clusterBy: ['y'] },
        /both partitioned and clustered/,
      ],
      ['unknown', { schema: SCHEMA, clusterBy: ['nope'] }, /'nope' is not in the schema/],
      ['repeated', { schema: SCHEMA, clusterBy: ['x', 'X'] }, /listed twice/],
      ['boolean', { schema: SCHEMA, clusterBy: ['flag'] }, /type boolean, which cannot cluster/],
      ['empty', { schema: SCHEMA, clusterBy: [] }, /at least one column/],
      [
        'five columns',
        { schema: 'a int, b int, c int, d int, e int', clusterBy: ['a', 'b', 'c', 'd', 'e'] },
        /at most 4 columns/,
      ],
      [
        'no statistics',
        { schema: SCHEMA, clusterBy: ['note'], properties: { 'delta.dataSkippingNumIndexedCols': '2' } },
        /gets no statistics/,
      ],
      [
        'feature by hand',
        { schema: SCHEMA, properties: { 'delta.feature.clustering': 'supported' } },
        /delta\.feature\.clustering is not set by hand/,
      ],
    ]
    for (const [name, options, message] of cases) {
      const location = join(dir, name.replace(/ /g, '-'))
      await assert.rejects(
        DeltaTable.create(location, options),
        (e) => isDeltaError(e, 'DELTA_INVALID_ARGUMENT') && message.test(e.message),
        name,
      )
      assert.equal(existsSync(join(location, '_delta_log', '00000000000000000000.json')), false, name)
    }
  })
})

describe('writes to a clustered table', () => {
  it('appends write unclustered files with statistics for the clustering columns', async () => {
    const table = await createClustered()
    try {
      const r = await table.append(rows(0, 20))
      const [add] = addsOf(await commitActions(table.location, r.version))
      assert.ok(add)
      assert.equal(add.clusteringProvider, undefined)
      const stats = parseStats(add.stats)
      assert.equal(stats?.minValues?.x !== undefined && stats?.maxValues?.y !== undefined, true)
      assert.deepEqual(await live(table), rows(0, 20))
    } finally {
      await table.close()
    }
  })

  it('OPTIMIZE clusters on the Z-order curve, marks its files with its provider and records clusterBy; a second one has nothing to do', async () => {
    const table = await createClustered()
    const twin = await DeltaTable.create(join(await tempDir(), 'twin'), { schema: SCHEMA })
    try {
      for (let f = 0; f < 4; f++) {
        await table.append(rows(f * 50, 50))
        await twin.append(rows(f * 50, 50))
      }
      const r = await table.optimize()
      assert.ok(r.committed)
      assert.deepEqual(await live(table), rows(0, 200))
      const actions = await commitActions(table.location, r.version)
      const info = commitInfoOf(actions)
      assert.equal(info.operation, 'OPTIMIZE')
      assert.equal(info.operationParameters?.clusterBy, '["x","y"]')
      assert.equal(info.operationParameters?.zOrderBy, '[]')
      const adds = addsOf(actions)
      assert.ok(adds.length >= 1)
      for (const a of adds) {
        assert.equal(a.clusteringProvider, CLUSTERING_PROVIDER)
        assert.equal(a.dataChange, false)
      }
      assert.equal(removesOf(actions).length, 4)
      // The same curve as a Z-order by the clustering columns.
      const z = await twin.optimize({ zOrderBy: ['x', 'y'] })
      const zAdds = addsOf(await commitActions(twin.location, z.version))
      const order = (await outputIdOrder(table.location, adds)).flat()
      assert.deepEqual(order, (await outputIdOrder(twin.location, zAdds)).flat())
      assert.notDeepEqual(
        order,
        [...order].sort((a, b) => Number(a - b)),
        'the rows are permuted',
      )

      const again = await table.optimize()
      assert.equal(again.committed, false, 'every file is clustered already')
      // New (unclustered) rows make the next OPTIMIZE recluster all files.
      await table.append(rows(200, 10))
      const third = await table.optimize()
      assert.ok(third.committed)
      const thirdActions = await commitActions(table.location, third.version)
      assert.equal(removesOf(thirdActions).length, adds.length + 1)
      assert.ok(addsOf(thirdActions).every((a) => a.clusteringProvider === CLUSTERING_PROVIDER))
      assert.deepEqual(await live(table), rows(0, 210))
    } finally {
      await table.close()
      await twin.close()
    }
  })

  it('OPTIMIZE leaves alone a file another clustering implementation clustered, as the protocol asks', async () => {
    const table = await createClustered()
    try {
      await table.append(rows(0, 30))
      await table.append(rows(30, 30))
      // The first file, re-committed as clustered by another implementation.
      const [theirs] = addsOf(await commitActions(table.location, 1))
      assert.ok(theirs)
      const txn = await table.begin()
      txn.stageActions(
        [
          { remove: { path: theirs.path, dataChange: false, deletionTimestamp: BigInt(Date.now()) } },
          { add: { ...theirs, dataChange: false, clusteringProvider: 'other-engine' } },
        ],
        { operation: 'MANUAL UPDATE', changesData: false },
      )
      await txn.commit()
      const r = await table.optimize()
      assert.ok(r.committed)
      const actions = await commitActions(table.location, r.version)
      assert.deepEqual(
        removesOf(actions).map((x) => x.path),
        addsOf(await commitActions(table.location, 2)).map((a) => a.path),
        'only the unclustered file is reclustered',
      )
      const files = (await table.snapshot()).activeFiles()
      assert.equal(files.find((f) => f.path === theirs.path)?.clusteringProvider, 'other-engine')
      assert.deepEqual(await live(table), rows(0, 60))
      // Only their file and ours are left: nothing more to do.
      assert.equal((await table.optimize()).committed, false)
    } finally {
      await table.close()
    }
  })

  it('OPTIMIZE with zOrderBy is refused as Delta refuses it, and nothing is committed', async () => {
    const table = await createClustered()
    try {
      await table.append(rows(0, 10))
      const filesBefore = (await readdir(table.location)).sort()
      await assert.rejects(
        table.optimize({ zOrderBy: ['id'] }),
        (e) =>
          isDeltaError(e, 'DELTA_CLUSTERING_WITH_ZORDER_BY') &&
          /cannot Z-order \(zOrderBy: id\); it clusters by x, y/.test(e.message),
      )
      assert.equal((await table.snapshot()).version, 1n)
      assert.deepEqual((await readdir(table.location)).sort(), filesBefore)
    } finally {
      await table.close()
    }
  })

  it('UPDATE, MERGE and copy-on-write DELETE run and write unclustered files; final rows are right', async () => {
    const table = await createClustered({ 'delta.enableDeletionVectors': 'false' })
    try {
      await table.append(rows(0, 30))
      await table.optimize()
      const u = await table.update({ set: { note: "'updated'" }, where: 'id < 5' })
      const m = await table.merge(
        [
          { id: 10n, x: 1, y: 2, flag: true, note: 'merged' },
          { id: 100n, x: 3, y: 4, flag: false, note: 'inserted' },
        ],
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: '*' }],
          whenNotMatched: [{ insert: '*' }],
        },
      )
      const d = await table.delete('id >= 25 AND id < 30')
      for (const v of [u.version, m.version, d.version]) {
        const actions = await commitActions(table.location, v)
        assert.ok(removesOf(actions).length > 0, `version ${v} rewrote files`)
        for (const a of addsOf(actions)) assert.equal(a.clusteringProvider, undefined)
      }
      const expected = rows(0, 25).map((r) => {
        if ((r.id as bigint) < 5n) return { ...r, note: 'updated' }
        if (r.id === 10n) return { id: 10n, x: 1, y: 2, flag: true, note: 'merged' }
        return r
      })
      expected.push({ id: 100n, x: 3, y: 4, flag: false, note: 'inserted' })
      assert.deepEqual(await live(table), byId(expected))
      // The next OPTIMIZE clusters the rewritten files again.
      const o = await table.optimize()
      assert.ok(o.committed)
      assert.deepEqual(await live(table), byId(expected))
    } finally {
      await table.close()
    }
  })

  it('with row tracking, OPTIMIZE keeps every row id and commit version', async () => {
    const table = await createClustered({ 'delta.enableRowTracking': 'true' })
    try {
      for (let f = 0; f < 3; f++) await table.append(rows(f * 40, 40))
      await table.delete('id % 9 = 0')
      await table.update({ set: { note: "'u'" }, where: 'id % 10 = 1' })
      const before = await table.scan({ withRowTracking: true }).toArray()
      const r = await table.optimize()
      assert.ok(r.committed)
      const afterRows = await table.scan({ withRowTracking: true }).toArray()
      const key = (x: Row) => `${x._row_id}|${x._row_commit_version}|${x.id}|${x.note}`
      assert.deepEqual(afterRows.map(key).sort(), before.map(key).sort())
      assert.equal(new Set(afterRows.map((x) => x._row_id)).size, afterRows.length)
      const info = commitInfoOf(await commitActions(table.location, r.version))
      assert.equal((info.tags as Record<string, string> | undefined)?.['delta.rowTracking.preserved'], 'true')
    } finally {
      await table.close()
    }
  })
})

describe('the Databricks fixture (legacy liquid clustering)', { skip: FIXTURE_SKIP }, () => {
  async function fixtureCopy(): Promise<DeltaTable> {
    const dir = join(await tempDir(), 'fixture')
    await cp(FIXTURE, dir, { recursive: true })
    return DeltaTable.open(dir)
  }

  async function ids(table: DeltaTable): Promise<Map<bigint, [bigint, bigint]>> {
    const rs = await table.scan({ withRowTracking: true }).toArray()
    const out = new Map<bigint, [bigint, bigint]>()
    for (const r of rs) {
      assert.ok(![...out.values()].some(([id]) => id === r._row_id), `row id ${r._row_id} is unique`)
      out.set(r.id as bigint, [r._row_id as bigint, r._row_commit_version as bigint])
    }
    return out
  }

  it('is appended to, updated and optimized with row ids kept; OPTIMIZE clusters by id, writes no clusteringProvider and leaves the protocol and the delta.liquid domain alone', async () => {
    const table = await fixtureCopy()
    try {
      const clustering = clusteringOf(await table.snapshot())
      assert.equal(clustering?.feature, 'liquid')
      assert.deepEqual(clustering?.columns, ['id'])

      const a = await table.append([{ id: 10n }, { id: 11n }])
      assert.equal(a.version, 1n)
      const u = await table.update({ set: { id: 'id + 100' }, where: 'id = 3' })
      assert.equal(u.version, 2n)
      const afterUpdate = await ids(table)
      const expected = new Map<bigint, [bigint, bigint]>()
      for (let i = 0n; i < 10n; i++) if (i !== 3n) expected.set(i, [i, 0n])
      expected.set(103n, [3n, 2n])
      expected.set(10n, [10n, 1n])
      expected.set(11n, [11n, 1n])
      assert.deepEqual(afterUpdate, expected)

      const o = await table.optimize()
      assert.ok(o.committed)
      assert.deepEqual(await ids(table), expected)
      const actions = await commitActions(table.location, o.version)
      const info = commitInfoOf(actions)
      assert.equal(info.operationParameters?.clusterBy, '["id"]')
      assert.equal((info.tags as Record<string, string> | undefined)?.['delta.rowTracking.preserved'], 'true')
      const adds = addsOf(actions)
      assert.ok(adds.length >= 1)
      for (const add of adds) assert.equal(add.clusteringProvider, undefined)
      assert.deepEqual(
        domainsOf(actions).map((d) => d.domain),
        ['delta.rowTracking'],
        'the id high-water mark, and no clustering domain',
      )
      assert.ok(!actions.some((x) => 'protocol' in x))
      const snap = await table.snapshot()
      assert.deepEqual(snap.protocol.writerFeatures, [
        'domainMetadata',
        'deletionVectors',
        'rowTracking',
        'liquid',
      ])
      assert.ok(snap.state.domainMetadata.has(LEGACY_CLUSTERING_DOMAIN))
      assert.ok(!snap.state.domainMetadata.has(CLUSTERING_DOMAIN))
      // Rows in id order: a Z-order by one column is a sort by it.
      const order = (await outputIdOrder(table.location, adds)).flat()
      assert.deepEqual(
        order,
        [...order].sort((p, q) => Number(p - q)),
      )
    } finally {
      await table.close()
    }
  })
})

describe('the CLI on clustered tables', () => {
  it('create --cluster-by makes a clustered table, describe shows its clustering columns, and --partition-by with it is refused', async () => {
    const dir = await tempDir()
    const loc = join(dir, 'cli')
    const created = await runCliInProcess([
      'create',
      loc,
      '--schema',
      SCHEMA,
      '--cluster-by',
      'y,x',
      '--json',
    ])
    assert.equal(created.code, 0, created.stderr)
    assert.deepEqual(JSON.parse(created.stdout).clusteringColumns, ['y', 'x'])
    const described = await runCliInProcess(['describe', loc, '--json'])
    assert.equal(described.code, 0, described.stderr)
    const summary = JSON.parse(described.stdout)
    assert.deepEqual(summary.clusteringColumns, ['y', 'x'])
    assert.ok(summary.protocol.writerFeatures.includes('clustering'))
    const human = await runCliInProcess(['describe', loc])
    assert.match(human.stdout, /clustered by \(clustering\) y, x/)

    const both = await runCliInProcess([
      'create',
      join(dir, 'both'),
      '--schema',
      SCHEMA,
      '--partition-by',
      'x',
      '--cluster-by',
      'y',
    ])
    assert.notEqual(both.code, 0)
    assert.match(both.stderr, /both partitioned and clustered/)
    assert.equal(existsSync(join(dir, 'both', '_delta_log', '00000000000000000000.json')), false)
  })
})
