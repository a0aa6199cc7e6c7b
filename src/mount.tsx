// Mounts the React app (loaded by main.tsx once the engine worker is on its way). Nothing heavy is imported here
// (no transformers.js, no engine code: the engine runs in its worker).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App';
import './ui/styles.css';

// The built page keeps itself for offline use (sw.js, made by scripts/offline-plugin.ts); the dev server does not.
if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  navigator.serviceWorker
    .register(`${import.meta.env.BASE_URL}sw.js`)
    .catch((e: unknown) => console.warn(`offline copy not kept: ${e instanceof Error ? e.message : String(e)}`));
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
