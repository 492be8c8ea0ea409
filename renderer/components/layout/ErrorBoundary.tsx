import { Component, type ErrorInfo as ReactErrorInfo, type ReactNode } from 'react';
import { fromThrown } from '../../store/error-info.js';
import { ErrorDetails } from '../common/ErrorDetails.js';

interface State {
  readonly error: unknown;
}

/**
 * A rendering bug in one area must not blank the window: the area shows what failed (the message,
 * never a stack) and a way to retry, and the rest keeps working.
 */
export class ErrorBoundary extends Component<{ area: string; children: ReactNode }, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error };
  }

  override componentDidCatch(error: unknown, info: ReactErrorInfo): void {
    console.error(`kvscope: the ${this.props.area} failed to render: ${fromThrown(error).message}`, info.componentStack?.split('\n')[1]?.trim() ?? '');
  }

  override render(): ReactNode {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="callout callout-error" role="alert" data-testid="render-error">
        <h3>The {this.props.area} could not be drawn</h3>
        <ErrorDetails error={fromThrown(this.state.error, 'internal', 'Try again; if it keeps failing, reload the window (Ctrl+R). Your runs are saved.')} testId="render-error-details" />
        <button type="button" onClick={() => this.setState({ error: null })}>Try again</button>
      </div>
    );
  }
}
