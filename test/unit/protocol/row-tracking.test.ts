import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  InternalError,
  InvalidTableError,
  RowIdAssignmentWithoutStatsError,
  RowTrackingNotEnabledError,
} from '../../../src/errors/index.js'
import {
  type Action,
  type AddFile,
  createAddFile,
  createDomainMetadata,
  createMetadata,
  createProtocol,
  createRemoveFile,
  type DomainMetadata,
  type Metadata,
  type Protocol,
} from '../../../src/protocol/actions.js'
import {
  checkMaterializedColumnNames,
  checkRowIdsReadable,
  MAX_LONG,
  parseRowIdHighWaterMark,
  ROW_TRACKING_DOMAIN,
  type RowTrackingState,
  rowIdHighWaterMark,
  rowTrackingDomain,
  rowTrackingState,
} from '../../../src/protocol/row-tracking.js'
import {
  assignRowIds,
  copyRowTrackingFields,
  highWaterMarkOf,
  rebaseRowIds,
  recommitWithRowTracking,
  removeWithRowTracking,
} from '../../../src/protocol/row-tracking-ids.js'

const RT_PROTOCOL = proto(['domainMetadata', 'rowTracking'])

function proto(writerFeatures: string[]): Protocol {
  return createProtocol({ minReaderVersion: 1, minWriterVersion: 7, writerFeatures })
}

function meta(configuration: Record<string, string> = {}): Metadata {
  return createMetadata({
    id: 'x',
    format: { provider: 'parquet', options: {} },
    schemaString: '{"type":"struct","fields":[]}',
    partitionColumns: [],
    configuration,
  })
}

const ENABLED: RowTrackingState = rowTrackingState(RT_PROTOCOL, meta({ 'delta.enableRowTracking': 'true' }))
const SUPPORTED: RowTrackingState = rowTrackingState(RT_PROTOCOL, meta())

function add(path: string, numRecords: number | undefined, extra: Partial<AddFile> = {}): AddFile {
  return createAddFile({
    path,
    partitionValues: {},
    size: 100n,
    modificationTime: 1n,
    dataChange: true,
    ...(numRecords === undefined ? {} : { stats: `{"numRecords":${numRecords}}` }),
    ...extra,
  })
}

const addA = (a: AddFile): Action => ({ add: a })
const domainA = (mark: bigint | number): Action => ({
  domainMetadata: createDomainMetadata({
    domain: ROW_TRACKING_DOMAIN,
    configuration: `{"rowIdHighWaterMark":${mark}}`,
    removed: false,
  }),
})

/** The (path, baseRowId, defaultRowCommitVersion) of each add, and the marks of domain actions. */
function summary(actions: readonly Action[]): unknown[] {
  return actions.map((a) => {
    if ('add' in a) return [a.add.path, a.add.baseRowId, a.add.defaultRowCommitVersion]
    if ('remove' in a) return ['remove', a.remove.path, a.remove.baseRowId, a.remove.defaultRowCommitVersion]
    if ('domainMetadata' in a) return ['mark', parseRowIdHighWaterMark(a.domainMetadata)]
    return Object.keys(a)[0]
  })
}

describe('row tracking state', () => {
  const cases: [string, Protocol, Record<string, string>, Partial<RowTrackingState>][] = [
    ['no feature', proto(['domainMetadata']), {}, { supported: false, enabled: false, assignsIds: false }],
    [
      'the property without the feature enables nothing',
      proto(['domainMetadata']),
      { 'delta.enableRowTracking': 'true' },
      { supported: false, enabled: false, assignsIds: false },
    ],
    [
      'supported, not enabled: writers assign ids',
      RT_PROTOCOL,
      {},
      { supported: true, enabled: false, assignsIds: true },
    ],
    [
      'enabled',
      RT_PROTOCOL,
      { 'delta.enableRowTracking': 'true' },
      { supported: true, enabled: true, suspended: false, assignsIds: true },
    ],
    [
      'suspended: writers assign nothing',
      RT_PROTOCOL,
      { 'delta.rowTrackingSuspended': 'true' },
      { supported: true, enabled: false, suspended: true, assignsIds: false },
    ],
    [
      'materialized column names from the configuration',
      RT_PROTOCOL,
      {
        'delta.enableRowTracking': 'true',
        'delta.rowTracking.materializedRowIdColumnName': '_row-id-col-1',
        'delta.rowTracking.materializedRowCommitVersionColumnName': '_row-commit-version-col-2',
      },
      {
        materializedRowIdColumn: '_row-id-col-1',
        materializedRowCommitVersionColumn: '_row-commit-version-col-2',
      },
    ],
    [
      'no materialized names: none',
      RT_PROTOCOL,
      { 'delta.enableRowTracking': 'true' },
      { materializedRowIdColumn: undefined, materializedRowCommitVersionColumn: undefined },
    ],
  ]
  for (const [name, protocol, config, expected] of cases) {
    it(name, () => {
      const state = rowTrackingState(protocol, meta(config))
      for (const [k, v] of Object.entries(expected)) assert.equal(state[k as keyof RowTrackingState], v, k)
    })
  }

  it('refuses contradictions with InvalidTableError', () => {
    const bad: [Protocol, Record<string, string>][] = [
      [proto(['rowTracking']), {}],
      [RT_PROTOCOL, { 'delta.enableRowTracking': 'true', 'delta.rowTrackingSuspended': 'true' }],
      [
        RT_PROTOCOL,
        {
          'delta.rowTracking.materializedRowIdColumnName': 'same',
          'delta.rowTracking.materializedRowCommitVersionColumnName': 'SAME',
        },
      ],
    ]
    for (const [protocol, config] of bad) {
      assert.throws(() => rowTrackingState(protocol, meta(config)), InvalidTableError)
    }
  })

  it('row ids are readable only when enabled', () => {
    assert.doesNotThrow(() => checkRowIdsReadable(ENABLED))
    assert.throws(
      () => checkRowIdsReadable(SUPPORTED),
      (e: unknown) => {
        assert.ok(e instanceof RowTrackingNotEnabledError)
        assert.equal(e.code, 'DELTA_ROW_TRACKING_NOT_ENABLED')
        assert.equal(e.reason, 'not-enabled')
        assert.match(e.hint ?? '', /delta\.enableRowTracking/)
        return true
      },
    )
    const none = rowTrackingState(proto([]), meta())
    assert.throws(() => checkRowIdsReadable(none), { reason: 'not-supported' })
  })

  it('refuses a materialized column named like a data column (logical or physical)', () => {
    const state = rowTrackingState(
      RT_PROTOCOL,
      meta({ 'delta.enableRowTracking': 'true', 'delta.rowTracking.materializedRowIdColumnName': 'col-7' }),
    )
    assert.doesNotThrow(() => checkMaterializedColumnNames(state, [{ name: 'id', physicalName: 'col-1' }]))
    assert.throws(
      () => checkMaterializedColumnNames(state, [{ name: 'id', physicalName: 'COL-7' }]),
      InvalidTableError,
    )
    assert.throws(
      () => checkMaterializedColumnNames(state, [{ name: 'col-7', physicalName: 'x' }]),
      InvalidTableError,
    )
  })
})

describe('row-id high-water mark', () => {
  const dm = (configuration: string): DomainMetadata =>
    createDomainMetadata({ domain: ROW_TRACKING_DOMAIN, configuration, removed: false })
  const good: [string, bigint][] = [
    ['{"rowIdHighWaterMark":9}', 9n],
    ['{"rowIdHighWaterMark":-1}', -1n],
    ['{"rowIdHighWaterMark":9007199254740993}', 9007199254740993n],
    [`{"rowIdHighWaterMark":${MAX_LONG}}`, MAX_LONG],
    ['{"other":"x","rowIdHighWaterMark":0}', 0n],
  ]
  for (const [text, mark] of good) {
    it(`reads ${text} exactly`, () => assert.equal(parseRowIdHighWaterMark(dm(text)), mark))
  }
  const bad = [
    'not json',
    '[1]',
    '{}',
    '{"rowIdHighWaterMark":"9"}',
    '{"rowIdHighWaterMark":1.5}',
    '{"rowIdHighWaterMark":-2}',
    `{"rowIdHighWaterMark":${MAX_LONG + 1n}}`,
  ]
  for (const text of bad) {
    it(`refuses ${text}`, () => assert.throws(() => parseRowIdHighWaterMark(dm(text)), InvalidTableError))
  }

  it('is undefined without the domain, and round-trips through rowTrackingDomain', () => {
    assert.equal(rowIdHighWaterMark(new Map()), undefined)
    const d = rowTrackingDomain(2n ** 60n)
    assert.equal(rowIdHighWaterMark(new Map([[ROW_TRACKING_DOMAIN, d]])), 2n ** 60n)
  })

  it("a commit's mark is its last rowTracking domain action; a removed domain records none", () => {
    const other = createDomainMetadata({ domain: 'delta.liquid', configuration: '{}', removed: false })
    assert.equal(highWaterMarkOf([other]), undefined)
    assert.equal(highWaterMarkOf([rowTrackingDomain(3n), other, rowTrackingDomain(7n)]), 7n)
    const removed = createDomainMetadata({ domain: ROW_TRACKING_DOMAIN, configuration: '', removed: true })
    assert.equal(highWaterMarkOf([rowTrackingDomain(3n), removed]), undefined)
  })
})

describe('assigning fresh row ids', () => {
  const cases: {
    name: string
    actions: Action[]
    mark: bigint | undefined
    state?: RowTrackingState
    expected: unknown[]
    expectedMark: bigint | undefined
  }[] = [
    {
      name: 'first ids of a table start at 0, and the domain records the last one',
      actions: [addA(add('a', 3)), addA(add('b', 2))],
      mark: undefined,
      expected: [
        ['a', 0n, 5n],
        ['b', 3n, 5n],
        ['mark', 4n],
      ],
      expectedMark: 4n,
    },
    {
      name: 'ids go above the existing mark',
      actions: [addA(add('a', 10))],
      mark: 9n,
      expected: [
        ['a', 10n, 5n],
        ['mark', 19n],
      ],
      expectedMark: 19n,
    },
    {
      name: 'a file of no rows takes no id, and alone does not move the mark',
      actions: [addA(add('empty', 0))],
      mark: 9n,
      expected: [['empty', 10n, 5n]],
      expectedMark: 9n,
    },
    {
      name: 'a recommitted add keeps its fields; a remove is untouched',
      actions: [
        addA(add('old', 4, { baseRowId: 2n, defaultRowCommitVersion: 1n })),
        {
          remove: createRemoveFile({
            path: 'gone',
            dataChange: true,
            baseRowId: 0n,
            defaultRowCommitVersion: 0n,
          }),
        },
        addA(add('new', 1)),
      ],
      mark: 9n,
      expected: [
        ['old', 2n, 1n],
        ['remove', 'gone', 0n, 0n],
        ['new', 10n, 5n],
        ['mark', 10n],
      ],
      expectedMark: 10n,
    },
    {
      name: 'an add with an id but no commit version gets the commit version only',
      actions: [addA(add('a', 1, { baseRowId: 3n }))],
      mark: 9n,
      expected: [['a', 3n, 5n]],
      expectedMark: 9n,
    },
    {
      name: "the commit's own domain action is replaced by the final mark",
      actions: [domainA(12), addA(add('a', 2))],
      mark: 9n,
      expected: [
        ['a', 10n, 5n],
        ['mark', 12n],
      ],
      expectedMark: 12n,
    },
    {
      name: 'a domain action lowering the mark is dropped',
      actions: [domainA(3), 'commitInfo' as never],
      mark: 9n,
      expected: ['commitInfo'],
      expectedMark: 9n,
    },
    {
      name: 'a suspended table assigns nothing',
      actions: [addA(add('a', 2))],
      mark: 9n,
      state: rowTrackingState(RT_PROTOCOL, meta({ 'delta.rowTrackingSuspended': 'true' })),
      expected: [['a', undefined, undefined]],
      expectedMark: 9n,
    },
    {
      name: 'ids are exact beyond 2^53',
      actions: [addA(add('a', 3)), addA(add('b', 1))],
      mark: 2n ** 53n,
      expected: [
        ['a', 2n ** 53n + 1n, 5n],
        ['b', 2n ** 53n + 4n, 5n],
        ['mark', 2n ** 53n + 4n],
      ],
      expectedMark: 2n ** 53n + 4n,
    },
  ]
  for (const c of cases) {
    it(c.name, () => {
      const actions = c.actions.map((a) => (a === ('commitInfo' as never) ? { commitInfo: {} } : a))
      const r = assignRowIds(actions, { state: c.state ?? ENABLED, highWaterMark: c.mark, commitVersion: 5n })
      assert.deepEqual(summary(r.actions), c.expected)
      assert.equal(r.highWaterMark, c.expectedMark)
    })
  }

  it('assigns on a table that supports row tracking without enabling it', () => {
    const r = assignRowIds([addA(add('a', 2))], {
      state: SUPPORTED,
      highWaterMark: undefined,
      commitVersion: 1n,
    })
    assert.deepEqual(summary(r.actions), [
      ['a', 0n, 1n],
      ['mark', 1n],
    ])
  })

  it('refuses a new add without numRecords, naming it', () => {
    for (const stats of [undefined, '{"minValues":{}}', 'not json']) {
      const a = createAddFile({
        ...add('nostats.parquet', undefined),
        ...(stats === undefined ? {} : { stats }),
      })
      assert.throws(
        () => assignRowIds([addA(a)], { state: ENABLED, highWaterMark: 0n, commitVersion: 1n }),
        (e: unknown) =>
          e instanceof RowIdAssignmentWithoutStatsError &&
          e.code === 'DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS' &&
          e.path === 'nostats.parquet',
      )
    }
  })

  it('a recommitted add without numRecords needs none', () => {
    const a = add('old', undefined, { baseRowId: 0n, defaultRowCommitVersion: 0n })
    const r = assignRowIds([addA(a)], { state: ENABLED, highWaterMark: 9n, commitVersion: 1n })
    assert.deepEqual(summary(r.actions), [['old', 0n, 0n]])
  })

  it('refuses ids past 2^63-1 instead of wrapping', () => {
    assert.doesNotThrow(() =>
      assignRowIds([addA(add('a', 1))], { state: ENABLED, highWaterMark: MAX_LONG - 1n, commitVersion: 1n }),
    )
    assert.throws(
      () =>
        assignRowIds([addA(add('a', 2))], {
          state: ENABLED,
          highWaterMark: MAX_LONG - 1n,
          commitVersion: 1n,
        }),
      InvalidTableError,
    )
  })
})

describe('copying row-tracking fields onto removes and recommitted adds', () => {
  const last = add('f', 4, { baseRowId: 20n, defaultRowCommitVersion: 3n })

  it('a remove and a recommitted add (new DV) of a live path copy both fields', () => {
    const actions: Action[] = [
      { remove: createRemoveFile({ path: 'f', dataChange: true }) },
      addA(
        add('f', 4, {
          deletionVector: { storageType: 'i', pathOrInlineDv: 'x', sizeInBytes: 1, cardinality: 1n },
        }),
      ),
      addA(add('new', 1)),
      { remove: createRemoveFile({ path: 'not-live', dataChange: true }) },
    ]
    const out = copyRowTrackingFields(actions, new Map([['f', last]]))
    assert.deepEqual(summary(out), [
      ['remove', 'f', 20n, 3n],
      ['f', 20n, 3n],
      ['new', undefined, undefined],
      ['remove', 'not-live', undefined, undefined],
    ])
    // The new add then takes fresh ids; the recommitted one keeps its own.
    const assigned = assignRowIds(out, { state: ENABLED, highWaterMark: 30n, commitVersion: 7n })
    assert.deepEqual(summary(assigned.actions).slice(1, 3), [
      ['f', 20n, 3n],
      ['new', 31n, 7n],
    ])
  })

  it('a last add without the fields leaves the action as it is', () => {
    const bare = add('f', 4)
    const r = removeWithRowTracking(createRemoveFile({ path: 'f', dataChange: true, baseRowId: 1n }), bare)
    assert.equal(r.baseRowId, 1n)
    assert.equal(r.defaultRowCommitVersion, undefined)
  })

  it('refuses to copy across paths', () => {
    assert.throws(() => recommitWithRowTracking(add('g', 1), last), InternalError)
    assert.throws(
      () => removeWithRowTracking(createRemoveFile({ path: 'g', dataChange: true }), last),
      InternalError,
    )
  })
})

describe('re-basing a losing commit over a winner', () => {
  /** The loser read mark 9 at version 4 and prepared version 5: two fresh files and a copy. */
  const loser = (): readonly Action[] =>
    assignRowIds(
      [
        addA(add('copy', 5, { baseRowId: 0n, defaultRowCommitVersion: 2n })),
        addA(add('l1', 3)),
        addA(add('l2', 2)),
      ],
      { state: ENABLED, highWaterMark: 9n, commitVersion: 5n },
    ).actions

  it('the loser as prepared', () => {
    assert.deepEqual(summary(loser()), [
      ['copy', 0n, 2n],
      ['l1', 10n, 5n],
      ['l2', 13n, 5n],
      ['mark', 14n],
    ])
  })

  const cases: {
    name: string
    winnerMark: bigint | undefined
    expected: unknown[]
    nextRead: bigint | undefined
  }[] = [
    {
      name: "fresh ids move above the winner's mark, the copy keeps its ids, versions move past the winner",
      winnerMark: 19n,
      expected: [
        ['copy', 0n, 2n],
        ['l1', 20n, 6n],
        ['l2', 23n, 6n],
        ['mark', 24n],
      ],
      nextRead: 19n,
    },
    {
      name: 'a winner that assigned no ids: fresh ids are re-based over the read mark, same values',
      winnerMark: undefined,
      expected: [
        ['copy', 0n, 2n],
        ['l1', 10n, 6n],
        ['l2', 13n, 6n],
        ['mark', 14n],
      ],
      nextRead: 9n,
    },
  ]
  for (const c of cases) {
    it(c.name, () => {
      const r = rebaseRowIds(loser(), {
        readHighWaterMark: 9n,
        winnerHighWaterMark: c.winnerMark,
        winnerVersion: 5n,
      })
      assert.deepEqual(summary(r.actions), c.expected)
      assert.equal(r.readHighWaterMark, c.nextRead)
    })
  }

  it('over two winners in turn, the ids stay unique and above both', () => {
    const w1 = rebaseRowIds(loser(), { readHighWaterMark: 9n, winnerHighWaterMark: 19n, winnerVersion: 5n })
    const w2 = rebaseRowIds(w1.actions, {
      readHighWaterMark: w1.readHighWaterMark,
      winnerHighWaterMark: 29n,
      winnerVersion: 6n,
    })
    assert.deepEqual(summary(w2.actions), [
      ['copy', 0n, 2n],
      ['l1', 30n, 7n],
      ['l2', 33n, 7n],
      ['mark', 34n],
    ])
    assert.equal(w2.readHighWaterMark, 29n)
    // A third winner that assigned nothing (a metadata change) keeps the ids and moves the version.
    const w3 = rebaseRowIds(w2.actions, {
      readHighWaterMark: 29n,
      winnerHighWaterMark: undefined,
      winnerVersion: 7n,
    })
    assert.deepEqual(summary(w3.actions), [
      ['copy', 0n, 2n],
      ['l1', 30n, 8n],
      ['l2', 33n, 8n],
      ['mark', 34n],
    ])
  })

  it('a loser that assigned no ids drops nothing and adds no domain action', () => {
    const actions: Action[] = [{ remove: createRemoveFile({ path: 'f', dataChange: true, baseRowId: 0n }) }]
    const r = rebaseRowIds(actions, { readHighWaterMark: 9n, winnerHighWaterMark: 19n, winnerVersion: 5n })
    assert.deepEqual(summary(r.actions), [['remove', 'f', 0n, undefined]])
  })

  it('a fresh add without numRecords is refused', () => {
    const actions: Action[] = [addA(add('x', undefined, { baseRowId: 10n, defaultRowCommitVersion: 5n }))]
    assert.throws(
      () => rebaseRowIds(actions, { readHighWaterMark: 9n, winnerHighWaterMark: 19n, winnerVersion: 5n }),
      RowIdAssignmentWithoutStatsError,
    )
  })

  // Design section 2.3: a row-level rebase re-adds the winner's output O, whose baseRowId (20) is
  // above the loser's read mark and whose defaultRowCommitVersion is the winner's version.
  describe('pitfall: a re-added winner output keeps its ids', () => {
    const winnerOutput = add('O', 4, { baseRowId: 20n, defaultRowCommitVersion: 5n })

    it('in the right order (fix-up first, then the re-add) O keeps baseRowId and version', () => {
      const fixed = rebaseRowIds(loser(), {
        readHighWaterMark: 9n,
        winnerHighWaterMark: 23n,
        winnerVersion: 5n,
      })
      const rebased = [...fixed.actions, addA(winnerOutput)]
      // The next winner's fix-up runs over the re-added O with the advanced read mark.
      const next = rebaseRowIds(rebased, {
        readHighWaterMark: fixed.readHighWaterMark,
        winnerHighWaterMark: 30n,
        winnerVersion: 6n,
      })
      const o = summary(next.actions).find((s) => Array.isArray(s) && s[0] === 'O')
      assert.deepEqual(o, ['O', 20n, 5n])
    })

    it('in the wrong order O would be renumbered and its version bumped; inheritedPaths prevents it', () => {
      const wrong = rebaseRowIds([...loser(), addA(winnerOutput)], {
        readHighWaterMark: 9n,
        winnerHighWaterMark: 23n,
        winnerVersion: 5n,
      })
      const o = summary(wrong.actions).find((s) => Array.isArray(s) && s[0] === 'O') as unknown[]
      assert.notEqual(o[1], 20n)
      assert.equal(o[2], 6n)
      const guarded = rebaseRowIds([...loser(), addA(winnerOutput)], {
        readHighWaterMark: 9n,
        winnerHighWaterMark: 23n,
        winnerVersion: 5n,
        inheritedPaths: new Set(['O']),
      })
      assert.deepEqual(summary(guarded.actions), [
        ['copy', 0n, 2n],
        ['l1', 24n, 6n],
        ['l2', 27n, 6n],
        ['O', 20n, 5n],
        ['mark', 28n],
      ])
    })
  })
})
