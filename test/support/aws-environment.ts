/** The variables the standard AWS credential chain reads credentials from. */
const AWS_CREDENTIAL_VARIABLES = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
];
const ISOLATING = {
  AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
  AWS_CONFIG_FILE: '/nonexistent/config',
  AWS_EC2_METADATA_DISABLED: 'true',
};

/**
 * The AWS chain cut off from the machine's own credentials (variables,
 * files, instance metadata), so a test's credentials are the only ones it
 * can find. Returns what puts the environment back as it was.
 */
export function isolateAwsEnvironment(): () => void {
  const saved: Record<string, string | undefined> = {};
  for (const name of [...AWS_CREDENTIAL_VARIABLES, ...Object.keys(ISOLATING)]) saved[name] = process.env[name];
  for (const name of AWS_CREDENTIAL_VARIABLES) delete process.env[name];
  Object.assign(process.env, ISOLATING);
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
