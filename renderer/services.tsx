import { createContext, useContext, type ReactNode } from 'react';
import { useStore } from 'zustand';
import { useShallow } from 'zustand/react/shallow';
import type { ChartTheme } from './charts/chart-theme.js';
import type { WorkbenchController } from './controller/workbench-controller.js';
import type { FrameLoop } from './metrics/frame-loop.js';
import type { WorkbenchState, WorkbenchStore } from './store/workbench-store.js';

/** What every component may reach: the store (through selectors), the controller, the frame loop. */
export interface WorkbenchServices {
  readonly store: WorkbenchStore;
  readonly controller: WorkbenchController;
  readonly frames: FrameLoop;
}

const ServicesContext = createContext<WorkbenchServices | null>(null);
const ThemeContext = createContext<ChartTheme | null>(null);

export function ServicesProvider({ services, theme, children }: { services: WorkbenchServices; theme: ChartTheme; children: ReactNode }): ReactNode {
  return (
    <ServicesContext.Provider value={services}>
      <ThemeContext.Provider value={theme}>{children}</ThemeContext.Provider>
    </ServicesContext.Provider>
  );
}

export function useServices(): WorkbenchServices {
  const services = useContext(ServicesContext);
  if (services === null) throw new Error('useServices must be used inside <ServicesProvider>');
  return services;
}

export function useChartTheme(): ChartTheme {
  const theme = useContext(ThemeContext);
  if (theme === null) throw new Error('useChartTheme must be used inside <ServicesProvider>');
  return theme;
}

/**
 * Selects from the one store with a shallow comparison (zustand's `useShallow`): a component
 * re-renders only when what it selected changed, even when the selector builds a new object.
 */
export function useWorkbench<T>(selector: (state: WorkbenchState) => T): T {
  const { store } = useServices();
  return useStore(store, useShallow(selector));
}
