/**
 * ALTER TABLE through the public API on local tables: properties (with the protocol upgrades they
 * imply), columns, comments, NOT NULL and CHECK constraints, each asserted on the final rows and
 * on the commit's actions as the log holds them; the refusals commit nothing.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  CheckConstraintViolationError,
  ConstraintAlreadyExistsError,
  ConstraintNotFoundError,
  NewConstraintViolationError,
  UnknownTablePropertyError,
} from '../../src/errors/constraint-errors.js'
import {
  InvalidArgumentError,
  InvalidPredicateError,
  UnsupportedTableFeatureError,
} from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { commitCount, type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-alter-'))
  roots.push(d)
  return join(d, 't')
}

async function table(
  properties: Record<string, string> = {},
  schema = 'id long not null, name string, amount int',
): Promise<{ dir: string; t: DeltaTable }> {
  const dir = await tempDir()
  const t = await DeltaTable.create(dir, { schema, properties })
  return { dir, t }
}

const ids = async (t: DeltaTable): Promise<number[]> =>
  (await t.scan().toArray()).map((r) => Number(r.id as bigint)).sort((a, b) => a - b)

describe('alter.setProperties and unsetProperties', () => {
  it('sets delta and user properties in one SET TBLPROPERTIES metadata commit', async () => {
    const { dir, t } = await table({ 'delta.enableDeletionVectors': 'false' })
    try {
      await t.append([{ id: 1n, name: 'a', amount: 1 }])
      const r = await t.alter.setProperties({ 'delta.appendOnly': 'true', owner: 'data-eng' })
      assert.equal(r.operation, 'SET TBLPROPERTIES')
      const lines = await logLines(dir, r.version)
      const info = lines.find((l) => l.commitInfo)?.commitInfo
      assert.equal(info.operation, 'SET TBLPROPERTIES')
      assert.deepEqual(JSON.parse(info.operationParameters.properties), {
        'delta.appendOnly': 'true',
        owner: 'data-eng',
      })
      const meta = lines.find((l) => l.metaData)?.metaData
      assert.equal(meta.configuration['delta.appendOnly'], 'true')
      assert.equal(meta.configuration.owner, 'data-eng')
      // appendOnly is a legacy writer-2 feature: the 1/2 protocol already has it.
      assert.equal(
        lines.some((l) => l.protocol),
        false,
      )
      const snap = await t.snapshot()
      assert.equal(snap.properties.owner, 'data-eng')
      assert.deepEqual(await ids(t), [1])
      const u = await t.alter.unsetProperties(['owner'])
      const unset = (await logLines(dir, u.version)).find((l) => l.commitInfo)?.commitInfo
      assert.equal(unset.operation, 'UNSET TBLPROPERTIES')
      assert.deepEqual(JSON.parse(unset.operationParameters.properties), ['owner'])
      assert.equal(unset.operationParameters.ifExists, 'false')
      assert.equal((await t.snapshot()).properties.owner, undefined)
    } finally {
      await t.close()
    }
  })

  it('adds the deletionVectors feature to the protocol when delta.enableDeletionVectors turns on', async () => {
    const { dir, t } = await table({ 'delta.enableDeletionVectors': 'false' })
    try {
      const before = (await t.snapshot()).protocol
      assert.deepEqual([before.minReaderVersion, before.minWriterVersion], [1, 2])
      const r = await t.alter.setProperties({ 'delta.enableDeletionVectors': 'true' })
      const lines = await logLines(dir, r.version)
      const protocol = lines.find((l) => l.protocol)?.protocol
      assert.deepEqual(protocol, {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['appendOnly', 'invariants', 'deletionVectors'],
      })
      await t.append([
        { id: 1n, name: 'a', amount: 1 },
        { id: 2n, name: 'b', amount: 2 },
      ])
      const del = await t.delete('id = 1')
      // The DELETE now marks the row in a deletion vector instead of rewriting the file.
      const add = (await logLines(dir, del.version)).find((l) => l.add)?.add
      assert.ok(add.deletionVector !== undefined)
      assert.deepEqual(await ids(t), [2])
    } finally {
      await t.close()
    }
  })

  it('refuses unknown and reserved delta properties and invalid values, committing nothing', async () => {
    const { dir, t } = await table()
    try {
      const before = await commitCount(dir)
      await assert.rejects(t.alter.setProperties({ 'delta.appendOnyl': 'true' }), UnknownTablePropertyError)
      await assert.rejects(
        t.alter.setProperties({ 'delta.constraints.p': 'id > 0' }),
        (e: unknown) => e instanceof UnknownTablePropertyError && /addConstraint/.test(e.hint ?? ''),
      )
      await assert.rejects(
        t.alter.setProperties({ 'delta.checkpointInterval': 'often' }),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === 'delta.checkpointInterval',
      )
      await assert.rejects(
        t.alter.setProperties({ 'delta.logRetentionDuration': 'interval 2 months' }),
        InvalidArgumentError,
      )
      await assert.rejects(t.alter.unsetProperties(['nope']), InvalidArgumentError)
      // A feature delta-rlc cannot write is refused before the commit.
      await assert.rejects(
        t.alter.setProperties({ 'delta.feature.icebergCompatV1': 'supported' }),
        UnsupportedTableFeatureError,
      )
      assert.equal(await commitCount(dir), before)
      const skipped = await t.alter.unsetProperties(['nope'], { ifExists: true })
      assert.equal(skipped.operation, 'UNSET TBLPROPERTIES')
    } finally {
      await t.close()
    }
  })
})

describe('alter.addColumns and setColumnComment', () => {
  it('adds nullable columns that read as null in rows written before, and can be written after', async () => {
    const { dir, t } = await table()
    try {
      await t.append([{ id: 1n, name: 'a', amount: 1 }])
      const r = await t.alter.addColumns('country string, score double')
      const lines = await logLines(dir, r.version)
      const info = lines.find((l) => l.commitInfo)?.commitInfo
      assert.equal(info.operation, 'ADD COLUMNS')
      assert.deepEqual(
        JSON.parse(info.operationParameters.columns).map((c: LogLine) => [c.column.name, c.column.type]),
        [
          ['country', 'string'],
          ['score', 'double'],
        ],
      )
      const schema = JSON.parse(lines.find((l) => l.metaData)?.metaData.schemaString)
      assert.deepEqual(
        schema.fields.map((f: LogLine) => [f.name, f.type, f.nullable]),
        [
          ['id', 'long', false],
          ['name', 'string', true],
          ['amount', 'integer', true],
          ['country', 'string', true],
          ['score', 'double', true],
        ],
      )
      await t.append([{ id: 2n, name: 'b', amount: 2, country: 'NL', score: 0.5 }])
      const rows = (await t.scan().toArray()).sort((a, b) => Number(a.id) - Number(b.id))
      assert.deepEqual(rows, [
        { id: 1n, name: 'a', amount: 1, country: null, score: null },
        { id: 2n, name: 'b', amount: 2, country: 'NL', score: 0.5 },
      ])
      await assert.rejects(t.alter.addColumns('Country string'), InvalidArgumentError)
      await assert.rejects(t.alter.addColumns('z int not null'), InvalidArgumentError)
    } finally {
      await t.close()
    }
  })

  it('sets a column comment with a CHANGE COLUMN commit', async () => {
    const { dir, t } = await table()
    try {
      const r = await t.alter.setColumnComment('amount', 'in cents')
      const lines = await logLines(dir, r.version)
      assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operation, 'CHANGE COLUMN')
      const schema = JSON.parse(lines.find((l) => l.metaData)?.metaData.schemaString)
      assert.equal(schema.fields[2].metadata.comment, 'in cents')
      await assert.rejects(t.alter.setColumnComment('nope', 'x'), InvalidArgumentError)
    } finally {
      await t.close()
    }
  })
})

describe('alter.addConstraint, dropConstraint and setNotNull', () => {
  it('adds a CHECK constraint (checkConstraints feature) and refuses writes that break it, committing nothing', async () => {
    const { dir, t } = await table({ 'delta.enableDeletionVectors': 'false' })
    try {
      await t.append([
        { id: 1n, name: 'a', amount: 5 },
        { id: 2n, name: 'b', amount: 7 },
      ])
      const r = await t.alter.addConstraint('positive_amount', 'amount > 0')
      const lines = await logLines(dir, r.version)
      const info = lines.find((l) => l.commitInfo)?.commitInfo
      assert.equal(info.operation, 'ADD CONSTRAINT')
      assert.deepEqual(info.operationParameters, { name: 'positive_amount', expr: 'amount > 0' })
      assert.equal(
        lines.find((l) => l.metaData)?.metaData.configuration['delta.constraints.positive_amount'],
        'amount > 0',
      )
      assert.deepEqual(lines.find((l) => l.protocol)?.protocol, { minReaderVersion: 1, minWriterVersion: 3 })
      const version = (await t.snapshot()).version
      await assert.rejects(
        t.append([
          { id: 3n, name: 'c', amount: 1 },
          { id: 4n, name: 'd', amount: -4 },
        ]),
        (e: unknown) =>
          e instanceof CheckConstraintViolationError &&
          e.code === 'DELTA_VIOLATE_CONSTRAINT_WITH_VALUES' &&
          e.constraint === 'positive_amount' &&
          e.row.id === 4n &&
          /positive_amount/.test(e.message),
      )
      // NULL does not satisfy a CHECK constraint.
      await assert.rejects(t.append([{ id: 5n, name: 'e', amount: null }]), CheckConstraintViolationError)
      await assert.rejects(
        t.update({ set: { amount: '0 - amount' }, where: 'id = 2' }),
        (e: unknown) => e instanceof CheckConstraintViolationError && e.row.id === 2n && e.row.amount === -7,
      )
      await assert.rejects(
        t.merge([{ id: 1n, amount: -1 }], {
          on: 'target.id = source.id',
          whenMatched: [{ update: { amount: 'source.amount' } }],
        }),
        (e: unknown) => e instanceof CheckConstraintViolationError && e.row.id === 1n,
      )
      await assert.rejects(
        t.append([{ id: 9n, name: 'z', amount: -9 }], { mode: 'overwrite' }),
        CheckConstraintViolationError,
      )
      assert.equal((await t.snapshot()).version, version)
      assert.deepEqual(await ids(t), [1, 2])
      // Only the data files of committed appends are left.
      const parquet = (await readdir(dir)).filter((f) => f.endsWith('.parquet'))
      assert.equal(parquet.length, (await t.snapshot()).activeFiles().length)
      // Rows that keep it are written.
      await t.update({ set: { amount: 'amount + 1' }, where: 'id = 2' })
      assert.equal((await t.scan({ where: 'id = 2' }).toArray())[0]?.amount, 8)
      await assert.rejects(
        t.alter.addConstraint('POSITIVE_AMOUNT', 'amount > 1'),
        ConstraintAlreadyExistsError,
      )
      const d = await t.alter.dropConstraint('Positive_Amount')
      const dropInfo = (await logLines(dir, d.version)).find((l) => l.commitInfo)?.commitInfo
      assert.deepEqual(dropInfo.operationParameters, {
        name: 'Positive_Amount',
        expr: 'amount > 0',
        existed: 'true',
      })
      await t.append([{ id: 4n, name: 'd', amount: -4 }])
      assert.deepEqual(await ids(t), [1, 2, 4])
      await assert.rejects(t.alter.dropConstraint('positive_amount'), ConstraintNotFoundError)
      const noop = await t.alter.dropConstraint('positive_amount', { ifExists: true })
      assert.equal(noop.committed, false)
    } finally {
      await t.close()
    }
  })

  it('refuses a constraint existing rows break, naming one, and a bad expression', async () => {
    const { dir, t } = await table()
    try {
      await t.append([
        { id: 1n, name: 'a', amount: 5 },
        { id: 2n, name: 'b', amount: -3 },
      ])
      const before = await commitCount(dir)
      await assert.rejects(
        t.alter.addConstraint('positive', 'amount > 0'),
        (e: unknown) =>
          e instanceof NewConstraintViolationError &&
          e.code === 'DELTA_NEW_CHECK_CONSTRAINT_VIOLATION' &&
          e.row.id === 2n,
      )
      await assert.rejects(t.alter.addConstraint('p', 'nope > 0'), InvalidArgumentError)
      await assert.rejects(t.alter.addConstraint('p', 'amount >'), InvalidPredicateError)
      assert.equal(await commitCount(dir), before)
    } finally {
      await t.close()
    }
  })

  it('sets NOT NULL after checking existing rows, then refuses a null in any write', async () => {
    const { dir, t } = await table()
    try {
      await t.append([
        { id: 1n, name: 'a', amount: 5 },
        { id: 2n, name: null, amount: 3 },
      ])
      await assert.rejects(
        t.alter.setNotNull('name'),
        (e: unknown) =>
          e instanceof NewConstraintViolationError &&
          e.code === 'DELTA_NEW_NOT_NULL_VIOLATION' &&
          e.row.id === 2n,
      )
      await t.update({ set: { name: "'b'" }, where: 'id = 2' })
      const r = await t.alter.setNotNull('name')
      const lines = await logLines(dir, r.version)
      assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operation, 'CHANGE COLUMN')
      const schema = JSON.parse(lines.find((l) => l.metaData)?.metaData.schemaString)
      assert.equal(schema.fields[1].nullable, false)
      const version = (await t.snapshot()).version
      await assert.rejects(t.update({ set: { name: 'upper(NULL)' }, where: 'id = 1' }), InvalidArgumentError)
      await assert.rejects(
        t.merge([{ id: 7n, name: null }], {
          on: 'target.id = source.id',
          whenNotMatched: [{ insert: { id: 'source.id', name: 'source.name', amount: '1' } }],
        }),
        (e: unknown) => e instanceof InvalidArgumentError && /'name'/.test(e.message),
      )
      await assert.rejects(t.append([{ id: 3n, name: null, amount: 1 }]), InvalidArgumentError)
      assert.equal((await t.snapshot()).version, version)
      assert.equal((await t.alter.setNotNull('name')).committed, false)
    } finally {
      await t.close()
    }
  })
})

describe('column invariants', () => {
  it('refuses a written row that breaks a delta.invariants expression, naming the invariant and the row', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: {
        type: 'struct',
        fields: [
          { name: 'id', type: 'long', nullable: false, metadata: {} },
          {
            name: 'qty',
            type: 'integer',
            nullable: true,
            metadata: { 'delta.invariants': JSON.stringify({ expression: { expression: 'qty >= 0' } }) },
          },
        ],
      },
      properties: { 'delta.enableDeletionVectors': 'false' },
    })
    try {
      const protocol = (await t.snapshot()).protocol
      assert.deepEqual([protocol.minReaderVersion, protocol.minWriterVersion], [1, 2])
      await t.append([{ id: 1n, qty: 3 }])
      await assert.rejects(
        t.append([{ id: 2n, qty: -1 }]),
        (e: unknown) =>
          e instanceof CheckConstraintViolationError &&
          e.constraint === 'EXPRESSION(qty >= 0)' &&
          e.row.id === 2n &&
          e.row.qty === -1,
      )
      await assert.rejects(t.update({ set: { qty: 'qty - 10' } }), CheckConstraintViolationError)
      assert.deepEqual(await t.scan().toArray(), [{ id: 1n, qty: 3 }])
    } finally {
      await t.close()
    }
  })
})
