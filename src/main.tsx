// Page entry: mounts the React app. Nothing heavy is imported here (no transformers.js, no engine code:
// the engine runs in its worker).
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './ui/App';
import './ui/styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
