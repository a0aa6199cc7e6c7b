// Keeps a failing panel from taking the page down: a render error in one panel shows its message there, with a
// retry, and the rest of the lab keeps working.
import { Component, type ErrorInfo, type ReactNode } from 'react';

export class PanelBoundary extends Component<{ name: string; children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.warn(`${this.props.name} failed to render: ${error.message}${info.componentStack ?? ''}`);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <section className="panel" role="alert" data-testid="panel-error">
        <p className="message error">
          The {this.props.name} panel failed: {this.state.error.message}. The rest of the lab still works.
        </p>
        <button type="button" className="secondary" onClick={() => this.setState({ error: null })}>
          Try again
        </button>
      </section>
    );
  }
}
