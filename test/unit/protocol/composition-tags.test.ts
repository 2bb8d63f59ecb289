/**
 * The compaction composition tags: the parser shared by Cases 4a and 4b (scenarios.md OCR-18..21)
 * and the builder OPTIMIZE uses to write them (rlc-spec 7.3, 7.4).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { parseCommitFile, serializeCommit } from '../../../src/protocol/action-json.js'
import type { NullableStringMap } from '../../../src/protocol/actions.js'
import {
  COMPACTED_INTO_TAG,
  COMPACTION_INFO_TAG,
  compositionTags,
  parseOptimizeSourceComposition,
  planCompositionTags,
  REMAPPED_COMPACTION_INFO_TAG,
  withCompositionTags,
  withRemappedComposition,
} from '../../../src/protocol/composition-tags.js'
import { add, inlineDv, remove } from '../conflict/factories.js'

await initDeletionVectors()

const outputs = new Set(['out.parquet'])
const tags = (into: string, info: string): NullableStringMap => ({
  [COMPACTED_INTO_TAG]: into,
  [COMPACTION_INFO_TAG]: info,
})
const source = (t?: NullableStringMap, dvCardinality = 0) =>
  remove('src.parquet', {
    deletionTimestamp: 1n,
    ...(t ? { tags: t } : {}),
    ...(dvCardinality > 0 ? { dv: inlineDv(Array.from({ length: dvCardinality }, (_, i) => i * 3)) } : {}),
  })

describe('parseOptimizeSourceComposition', () => {
  const parsed: readonly [string, NullableStringMap, number][] = [
    [
      'OCR-18 parses a single-run compaction entry',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":100,"sourceNumPhysicalRecords":90}]'),
      0,
    ],
    [
      'OCR-19 derives liveCount from the physical count minus the read-time DV',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":100,"sourceNumPhysicalRecords":100}]'),
      10,
    ],
    [
      'OCR-20 tolerates unknown fields in a compaction entry',
      tags(
        '["out.parquet"]',
        '[{"rowOffsetInTarget":100,"sourceNumPhysicalRecords":90,"sourceDeletionVector":null}]',
      ),
      0,
    ],
  ]
  for (const [name, t, card] of parsed) {
    it(`${name}: (out.parquet, 100, 90)`, () => {
      const tomb = source(t, card)
      assert.deepEqual(parseOptimizeSourceComposition(tomb, outputs), {
        outputPath: 'out.parquet',
        outputStart: 100,
        liveCount: 90,
        physicalRecords: 90 + card,
        readDeletionVector: tomb.deletionVector,
      })
    })
  }

  const refused: readonly [string, NullableStringMap | undefined, number][] = [
    [
      'OCR-21(i) the output is not among the commit outputs',
      tags('["elsewhere.parquet"]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":90}]'),
      0,
    ],
    [
      'OCR-21(ii) two entries: the source is split across runs',
      tags(
        '["out.parquet"]',
        '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":40},{"rowOffsetInTarget":40,"sourceNumPhysicalRecords":50}]',
      ),
      0,
    ],
    ['OCR-21(iii) compactionInfo is not JSON', tags('["out.parquet"]', 'not json'), 0],
    ['OCR-21(iv) no tags at all', undefined, 0],
    [
      'two outputs',
      tags('["out.parquet","out.parquet"]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":9}]'),
      0,
    ],
    [
      'compactedInto missing',
      { [COMPACTION_INFO_TAG]: '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":9}]' },
      0,
    ],
    ['rowOffsetInTarget missing', tags('["out.parquet"]', '[{"sourceNumPhysicalRecords":9}]'), 0],
    [
      'sourceNumPhysicalRecords null',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":null}]'),
      0,
    ],
    [
      'a negative offset',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":-1,"sourceNumPhysicalRecords":9}]'),
      0,
    ],
    [
      'a fractional count',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":9.5}]'),
      0,
    ],
    [
      'a DV larger than the physical count',
      tags('["out.parquet"]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":5}]'),
      6,
    ],
    ['an entry that is not an object', tags('["out.parquet"]', '[7]'), 0],
    [
      'an output that is not a string',
      tags('[7]', '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":9}]'),
      0,
    ],
    ['a tag value that is null', { [COMPACTED_INTO_TAG]: null, [COMPACTION_INFO_TAG]: '[]' }, 0],
  ]
  for (const [name, t, card] of refused) {
    it(`${name}: none`, () => {
      assert.equal(parseOptimizeSourceComposition(source(t, card), outputs), undefined)
    })
  }
})

describe('planCompositionTags (the write side)', () => {
  const stats = (n: number) => ({ numRecords: n, min: { id: 0 }, max: { id: n } })

  it('lays sources out in write order, counting only live rows, with the physical count in the tag', () => {
    const a = add('a.parquet', { stats: stats(100) })
    const b = add('b.parquet', { stats: stats(100), dv: inlineDv([0]) })
    const c = add('c.parquet', { stats: stats(100) })
    const plan = planCompositionTags('out.parquet', [a, b, c], [100, 99, 100])
    assert.ok(plan)
    assert.deepEqual(
      [...plan.entries()],
      [
        ['a.parquet', compositionTags('out.parquet', 0, 100)],
        ['b.parquet', compositionTags('out.parquet', 100, 100)],
        ['c.parquet', compositionTags('out.parquet', 199, 100)],
      ],
    )
    assert.equal(
      plan.get('c.parquet')?.[COMPACTION_INFO_TAG],
      '[{"rowOffsetInTarget":199,"sourceNumPhysicalRecords":100}]',
    )
    assert.equal(plan.get('c.parquet')?.[COMPACTED_INTO_TAG], '["out.parquet"]')
  })

  it('round-trips through the parser of the tombstone it tags', () => {
    const b = add('b.parquet', { stats: stats(100), dv: inlineDv([0, 1, 2]) })
    const plan = planCompositionTags('out.parquet', [add('a.parquet', { stats: stats(50) }), b])
    const tomb = withCompositionTags(
      remove('b.parquet', { dv: b.deletionVector!, tags: { keep: 'me' } }),
      plan!.get('b.parquet')!,
    )
    assert.equal(tomb.tags?.keep, 'me')
    assert.deepEqual(parseOptimizeSourceComposition(tomb, outputs), {
      outputPath: 'out.parquet',
      outputStart: 50,
      liveCount: 97,
      physicalRecords: 100,
      readDeletionVector: b.deletionVector,
    })
  })

  const untrusted: readonly [
    string,
    Parameters<typeof planCompositionTags>[1],
    readonly number[] | undefined,
  ][] = [
    [
      'a source without a row count (SCC-05)',
      [add('a.parquet'), add('b.parquet', { stats: stats(3) })],
      undefined,
    ],
    [
      'a source listed twice (interleaved runs, SCC-02)',
      [add('a.parquet', { stats: stats(3) }), add('a.parquet', { stats: stats(3) })],
      undefined,
    ],
    ['written counts that differ from the live rows', [add('a.parquet', { stats: stats(3) })], [2]],
    ['written counts of another length', [add('a.parquet', { stats: stats(3) })], [3, 0]],
    ['no source', [], undefined],
  ]
  for (const [what, sources, written] of untrusted) {
    it(`refuses to tag ${what}`, () => {
      assert.equal(planCompositionTags('out.parquet', sources, written), undefined)
    })
  }
})

describe('remappedCompactionInfo (a tombstone re-pointed by a forward remap)', () => {
  const readDv = inlineDv([0, 3, 6])
  const grown = inlineDv([0, 3, 6, 40, 41])
  const original = withCompositionTags(
    remove('src.parquet', { dv: readDv }),
    compositionTags('out.parquet', 100, 90),
  )
  const run = parseOptimizeSourceComposition(original, outputs)!
  const repointed = withRemappedComposition(
    remove('src.parquet', { dv: grown, tags: { [COMPACTED_INTO_TAG]: '["x"]', keep: 'me' } }),
    run,
  )

  it('keeps the run and the read-time DV while the tombstone holds a grown one', () => {
    assert.deepEqual(parseOptimizeSourceComposition(repointed, outputs), run)
    assert.equal(run.liveCount, 87)
  })

  it('drops the standard tags, so a reader deriving the run from the tombstone DV finds none', () => {
    assert.equal(repointed.tags?.[COMPACTED_INTO_TAG], undefined)
    assert.equal(repointed.tags?.[COMPACTION_INFO_TAG], undefined)
    assert.equal(repointed.tags?.keep, 'me')
  })

  it('survives a round trip through a commit file, file-backed descriptor and 64-bit cardinality included', () => {
    const fileDv = {
      storageType: 'u' as const,
      pathOrInlineDv: 'ab^-aqEH.-t@S}K{vb[*k^',
      offset: 4,
      sizeInBytes: 40,
      cardinality: 3n,
      maxRowIndex: 9007199254740993n,
    }
    const r = { ...run, readDeletionVector: fileDv }
    const tomb = withRemappedComposition(remove('src.parquet', { dv: grown }), r)
    const [back] = parseCommitFile(serializeCommit([{ remove: tomb }]))
    assert.ok(back && 'remove' in back)
    assert.deepEqual(parseOptimizeSourceComposition(back.remove, outputs), r)
  })

  it('a source without a read-time DV is written as null and read back as none', () => {
    const plain = parseOptimizeSourceComposition(
      withCompositionTags(remove('src.parquet'), compositionTags('out.parquet', 0, 90)),
      outputs,
    )!
    const tomb = withRemappedComposition(remove('src.parquet', { dv: grown }), plain)
    assert.match(tomb.tags?.[REMAPPED_COMPACTION_INFO_TAG] ?? '', /"readDeletionVector":null/)
    assert.deepEqual(parseOptimizeSourceComposition(tomb, outputs), plain)
  })

  const info = (fields: string) => ({ [REMAPPED_COMPACTION_INFO_TAG]: fields })
  const refused: readonly [string, NullableStringMap, number][] = [
    [
      'both tag forms at once',
      {
        ...info('{"compactedInto":"out.parquet","rowOffsetInTarget":0,"sourceNumPhysicalRecords":9}'),
        [COMPACTED_INTO_TAG]: '["out.parquet"]',
      },
      0,
    ],
    ['not JSON', info('{'), 0],
    ['an array', info('[]'), 0],
    [
      'an output not in the commit',
      info('{"compactedInto":"x","rowOffsetInTarget":0,"sourceNumPhysicalRecords":9}'),
      0,
    ],
    [
      'a malformed read-time DV',
      info(
        '{"compactedInto":"out.parquet","rowOffsetInTarget":0,"sourceNumPhysicalRecords":9,"readDeletionVector":{"storageType":"z"}}',
      ),
      3,
    ],
    [
      'a read-time DV larger than the tombstone DV',
      info(
        `{"compactedInto":"out.parquet","rowOffsetInTarget":0,"sourceNumPhysicalRecords":99,"readDeletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":40,"cardinality":4}}`,
      ),
      3,
    ],
    ['a missing offset', info('{"compactedInto":"out.parquet","sourceNumPhysicalRecords":9}'), 0],
  ]
  for (const [name, t, card] of refused) {
    it(`${name}: none`, () => {
      assert.equal(parseOptimizeSourceComposition(source(t, card), outputs), undefined)
    })
  }
})
