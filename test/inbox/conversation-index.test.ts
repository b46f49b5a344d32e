import { openNodeDbIn, createSqliteConversationIndex, createPostgresConversationIndex } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';

import { runConversationIndexContract } from './conversation-index.contract.js';

runConversationIndexContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  return { repo: createSqliteConversationIndex(db), close: () => db.close() };
});

const postgres = usePostgres();
runConversationIndexContract('postgres', async () => {
  const db = await postgres.open();
  return { repo: createPostgresConversationIndex(db), close: () => db.close() };
});
