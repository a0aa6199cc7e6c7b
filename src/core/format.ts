// Byte counts as people read them, the one formatter of the memory plan, the CLI and the page.

/** Bytes in binary units, trailing zeros dropped: "2 GiB", "1.5 GiB", "7.84 GiB", "513.1 MiB", "128 MiB", "16 KiB". */
export function formatBytes(bytes: number): string {
  const [value, unit, digits] =
    bytes >= 2 ** 30
      ? [bytes / 2 ** 30, 'GiB', 2]
      : bytes >= 2 ** 20
        ? [bytes / 2 ** 20, 'MiB', 1]
        : [bytes / 2 ** 10, 'KiB', 1];
  return `${value.toFixed(digits as number).replace(/\.?0+$/, '')} ${unit}`;
}
