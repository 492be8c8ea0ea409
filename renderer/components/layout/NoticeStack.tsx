import { useEffect, type ReactNode } from 'react';
import { useServices, useWorkbench } from '../../services.js';
import type { Notice } from '../../store/notice-slice.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

/** Notices stay this long unless they are errors, which stay until dismissed. */
const NOTICE_MS = 6000;

export function NoticeStack(): ReactNode {
  const notices = useWorkbench((s) => s.notices);
  return (
    <div className="notices" aria-label="Notifications">
      {notices.map((notice) => <NoticeCard key={notice.id} notice={notice} />)}
    </div>
  );
}

function NoticeCard({ notice }: { notice: Notice }): ReactNode {
  const { store } = useServices();
  useEffect(() => {
    if (notice.tone === 'error') return;
    const timer = setTimeout(() => store.getState().dismissNotice(notice.id), NOTICE_MS);
    return () => clearTimeout(timer);
  }, [notice, store]);
  return (
    <div className={`notice notice-${notice.tone}`} role={notice.tone === 'error' ? 'alert' : 'status'} data-testid="notice" data-tone={notice.tone}>
      <div className="notice-head">
        <strong data-testid="notice-title">{notice.title}</strong>
        <button type="button" className="icon-button" onClick={() => store.getState().dismissNotice(notice.id)} aria-label="Dismiss" data-testid="notice-dismiss">×</button>
      </div>
      {notice.text !== undefined && <p data-testid="notice-text">{notice.text}</p>}
      {notice.error !== undefined && <ErrorDetails error={notice.error} testId="notice-error" />}
    </div>
  );
}
