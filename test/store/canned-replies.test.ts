import { createPostgresCannedReplyStore, createSqliteCannedReplyStore, openNodeDbIn } from '../../src/store/index.js';
import { usePostgres } from '../harness/use-postgres.js';
import { runCannedReplyContract } from './canned-replies.contract.js';

runCannedReplyContract('sqlite', async () => {
  const db = openNodeDbIn(null);
  return { store: createSqliteCannedReplyStore(db), close: () => db.close() };
});

const postgres = usePostgres();
runCannedReplyContract('postgres', async () => {
  const db = await postgres.open();
  return { store: createPostgresCannedReplyStore(db), close: () => db.close() };
});
