import { nameKey, type Resource } from '../resources/port.js';
import { scanValues } from './source.js';
import type { ImportTable } from './table.js';

/*
 *   <p>:{o:<org>}:res:<id>      resource JSON
 *   <p>:{o:<org>}:res:names     hash lower-cased name -> id   (the table's unique name_key)
 *   <p>:{o:<org>}:res:ids       zset id by creation           (the table's created_at order)
 */

const INDEXES = new Set(['names', 'ids']);

const resources: ImportTable = {
  name: 'resources',
  table: 'resources',
  columns: [
    { name: 'org', type: 'text' },
    { name: 'id', type: 'text' },
    { name: 'name_key', type: 'text' },
    { name: 'version', type: 'integer' },
    { name: 'created_at', type: 'text' },
    { name: 'body', type: 'jsonb' },
  ],
  key: ['org', 'id'],
  deletable: true,
  async *read(src) {
    for await (const found of scanValues(src, '{o:*}:res:*', (parts) => !INDEXES.has(parts[1]!))) {
      const rows = found.map(({ parts: [org], value }) => {
          const r = JSON.parse(value) as Resource;
          return { values: [org, r.id, nameKey(r.name), r.version, r.createdAt, r], compare: r };
        });
      if (rows.length > 0) yield rows;
    }
  },
};

export const RESOURCE_TABLES: ImportTable[] = [resources];
