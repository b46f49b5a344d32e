/**
 * What the CLI's local commands (the ones that do not go through the operator
 * API: `operator reset-token`, `webhooks listen`, `backup`) receive and return.
 * A module of its own so that the command files and `admin.ts`, which lists
 * them, do not import each other.
 */
/** What a local command gets: its flags, the environment (for config), and where to write. */
export interface LocalContext {
  flags: Record<string, string>;
  env: Record<string, string | undefined>;
  json: boolean;
  out: (s: string) => void;
  err: (s: string) => void;
  /** The API's base URL and the operator token, for commands that need them. */
  connection: () => { base: string; token: string | undefined };
  /** Aborted to stop a long-running command (Ctrl-C). */
  signal?: AbortSignal;
}

export interface LocalCommand {
  usage: string;
  required: string[];
  /** Runs the command; resolves to the exit code. */
  local(ctx: LocalContext): Promise<number>;
}
