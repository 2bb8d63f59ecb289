export type { ColumnSpec, DataFileRef, DataPlane, FileMatches, ScanRequest } from './data-plane.js'
export type { Engine, EngineCallOptions, ParquetHandler } from './engine.js'
