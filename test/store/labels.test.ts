import { openNodeDbIn, createSqliteConversationIndex, createPostgresConversationIndex, createSqliteLabelRepo, createPostgresLabelRepo } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runLabelContract } from './labels.contract.js';

runLabelContract('embedded', async () => {
  const db = await openNodeDbIn(null);
  return { labels: createSqliteLabelRepo(db), conversations: createSqliteConversationIndex(db), close: () => db.close() };
});

const postgres = usePostgres();
runLabelContract('postgres', async () => {
  const db = await postgres.open();
  return { labels: createPostgresLabelRepo(db), conversations: createPostgresConversationIndex(db), close: () => db.close() };
});
