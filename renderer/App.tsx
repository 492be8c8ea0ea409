import { useEffect, useState, type ReactNode } from 'react';
import { readChartTheme, type ChartTheme } from './charts/chart-theme.js';
import { ErrorBoundary } from './components/layout/ErrorBoundary.js';
import { AppHeader } from './components/layout/AppHeader.js';
import { NoticeStack } from './components/layout/NoticeStack.js';
import { StatusBar } from './components/layout/StatusBar.js';
import { Workspace } from './components/layout/Workspace.js';
import { FolderBrowser } from './components/model/FolderBrowser.js';
import { ModelPanel } from './components/model/ModelPanel.js';
import { RunPanel } from './components/run/RunPanel.js';
import { WhatIfPanel } from './components/run/WhatIfPanel.js';
import { ServicesProvider, type WorkbenchServices } from './services.js';
import { useShortcuts } from './use-shortcuts.js';

/** The workbench window: header, settings on the left, results on the right, status at the bottom. */
export function App({ services }: { services: WorkbenchServices }): ReactNode {
  const theme = useColorScheme();
  useShortcuts(services.controller);
  return (
    <ServicesProvider services={services} theme={theme}>
      <a className="skip-link" href="#workspace">Skip to results</a>
      <div className="app" data-testid="app" data-color-scheme={theme.dark ? 'dark' : 'light'}>
        <AppHeader />
        <div className="body">
          <aside className="sidebar" aria-label="Model and run settings">
            <ErrorBoundary area="model panel"><ModelPanel /></ErrorBoundary>
            <ErrorBoundary area="run panel"><RunPanel /></ErrorBoundary>
            <ErrorBoundary area="memory what-if"><WhatIfPanel /></ErrorBoundary>
          </aside>
          <ErrorBoundary area="results"><Workspace /></ErrorBoundary>
        </div>
        <StatusBar />
      </div>
      <NoticeStack />
      <FolderBrowser />
    </ServicesProvider>
  );
}

/** The chart colours follow prefers-color-scheme, as the CSS does. */
function useColorScheme(): ChartTheme {
  const [theme, setTheme] = useState<ChartTheme>(readChartTheme);
  useEffect(() => {
    if (typeof matchMedia !== 'function') return;
    const query = matchMedia('(prefers-color-scheme: dark)');
    const onChange = (): void => setTheme(readChartTheme());
    query.addEventListener('change', onChange);
    return () => query.removeEventListener('change', onChange);
  }, []);
  return theme;
}
