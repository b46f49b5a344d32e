import { createPostgresSearchIndex, createPostgresStore, createSqliteSearchIndex, createSqliteStore, openNodeDbIn } from '../../src/store/index.js';
import { createPostgresSessionMessageRepo } from '../../src/store/session-messages/postgres.js';
import { createSqliteSessionMessageRepo } from '../../src/store/session-messages/sqlite.js';
import { usePostgres } from '../harness/use-postgres.js';
import { useRedisClients } from '../harness/use-servers.js';
import { runSearchContract } from './search.contract.js';

runSearchContract('embedded (FTS5)', async () => {
  const db = openNodeDbIn(null);
  return { search: createSqliteSearchIndex(db), contacts: createSqliteStore(db).contacts, messages: createSqliteSessionMessageRepo(db), close: () => db.close() };
});

const redis = useRedisClients();
const postgres = usePostgres();
runSearchContract('PostgreSQL (tsvector)', async () => {
  const db = await postgres.open();
  const store = createPostgresStore(db, await redis.client(), { prefix: 'search' });
  return { search: createPostgresSearchIndex(db), contacts: store.contacts, messages: createPostgresSessionMessageRepo(db), close: async () => {} };
});
