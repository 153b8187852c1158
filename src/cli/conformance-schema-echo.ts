// json-schema-2020-12-preservation (SEP-1613, SEP-2106), shared by both eras of `sluice conformance-client`.

/** Calls `json_schema_echo` with the inputSchema of the other tool listed (json-schema-2020-12-preservation). */
export async function echoSchema(
  tools: readonly { name: string; inputSchema?: unknown }[],
  call: (name: string, args: Record<string, unknown>) => Promise<unknown>,
): Promise<void> {
  const echo = tools.find((t) => t.name === 'json_schema_echo');
  const focal = tools.find((t) => t.name !== 'json_schema_echo');
  if (echo === undefined || focal === undefined)
    throw new Error('json_schema_echo and a focal tool expected');
  await call(echo.name, { schema: focal.inputSchema });
}
