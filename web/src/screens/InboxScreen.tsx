import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { ChannelInfo, SessionUser } from '../api/types';
import { ConversationList } from '../components/ConversationList';
import { ConversationView } from '../components/ConversationView';
import { useInbox } from '../inbox/context';
import { useObservable } from '../state';

/** The queue, the agent's own conversations, and the open conversation beside them. */
export function InboxScreen({ user, conversationId }: { user: SessionUser; conversationId: string | null }) {
  const inbox = useInbox();
  const lists = useObservable(inbox.lists);
  const unread = useObservable(inbox.unread);
  const connection = useObservable(inbox.connection);
  const [channels, setChannels] = useState<ChannelInfo[]>([]);

  useEffect(() => {
    ok(api.GET('/v1/channels'))
      .then((r) => setChannels(r.channels as ChannelInfo[]))
      .catch(() => undefined);
  }, []);

  return (
    <div class={`inbox ${conversationId ? 'has-open' : ''}`}>
      <div class="inbox-lists">
        <p class={`connection ${connection}`} role="status" data-testid="connection">
          {connection === 'open' ? 'Live' : connection === 'reconnecting' ? 'Reconnecting…' : connection === 'closed' ? 'Offline' : 'Connecting…'}
        </p>
        {!lists.loaded ? (
          <p class="muted">Loading conversations…</p>
        ) : (
          <>
            <ConversationList title="Waiting" testid="queue" conversations={lists.queue} total={lists.queueTotal} unread={unread} selected={conversationId} empty="Nobody is waiting." onMore={() => void inbox.loadMoreQueue()} />
            <ConversationList title="Mine" testid="mine" conversations={lists.mine} unread={unread} selected={conversationId} empty="You have no conversation." />
          </>
        )}
      </div>
      <div class="inbox-detail">
        {conversationId ? <ConversationView key={conversationId} id={conversationId} user={user} channels={channels} /> : <p class="muted pick">Pick a conversation.</p>}
      </div>
    </div>
  );
}
