import { openNodeDbIn } from '../../src/store/index.js';
import { createSqliteResourceStore } from '../../src/store/resources/sqlite.js';
import { createPostgresResourceStore } from '../../src/store/resources/postgres.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runResourceStoreContract } from './resource-store-contract.js';

runResourceStoreContract('embedded', async () => createSqliteResourceStore(await openNodeDbIn(null)));

const postgres = usePostgres();
runResourceStoreContract('postgres', async () => createPostgresResourceStore(await postgres.open()));
