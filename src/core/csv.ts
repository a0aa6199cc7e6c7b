// Splitting one CSV line into its cells (RFC 4180 quoting), the one splitter of the metrics-CSV reader
// (src/io/run-files.ts) and the prompt-list reader (src/tasks/prompt-list.ts). Lines only: a cell holding a
// newline is not read (neither file kind writes one).

/**
 * The cells of one CSV line: `"a ""quoted"" cell"` reads as `a "quoted" cell`, commas inside quotes stay in the
 * cell. Null when a quoted cell is never closed (the line's remaining cells would vanish into it).
 */
export function splitCsvLine(line: string): string[] | null {
  const cells: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"' && cur === '') quoted = true;
    else if (ch === ',') {
      cells.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) return null;
  cells.push(cur);
  return cells;
}
