// The page's title and tagline, the same on every page (the lab, ?selftest, ?bench).

export function PageHeader() {
  return (
    <header className="app-header">
      <h1>RL Lab</h1>
      <p className="tagline">
        GRPO, PPO and their relatives, trained live on your GPU. Every kernel is a WGSL compute shader.
      </p>
    </header>
  );
}
