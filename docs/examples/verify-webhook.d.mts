export function verifyXSignature(secret: string, rawBody: Buffer | string, xSignature: string | undefined): boolean;
export function verifyStandardWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer | string,
  options?: { toleranceSeconds?: number; now?: number },
): boolean;
