import { createPostgresTeamStore, createSqliteTeamStore, openNodeDbIn } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runTeamStoreContract } from './teams.contract.js';

runTeamStoreContract('sqlite', async () => {
  const db = openNodeDbIn(null);
  return { store: createSqliteTeamStore(db), close: () => db.close() };
});

const postgres = usePostgres();
runTeamStoreContract('postgres', async () => {
  const db = await postgres.open();
  return { store: createPostgresTeamStore(db), close: () => db.close() };
});
