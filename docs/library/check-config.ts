// Check a config before it ships (a CI step, a deploy script): every problem at
// once, as data, with the same checks createGateway makes, upstream keys
// included. Nothing starts and nothing listens.
import { checkConfig, type ConfigIssue } from 'portcullis';

const config: unknown = {
  providers: { demo: { type: 'demo' } },
  aliases: { 'service-chat': { provider: 'demo', model: 'portcullis-demo' } },
};

const issues: ConfigIssue[] = checkConfig(config, { baseDir: process.cwd(), env: process.env });
for (const issue of issues) console.error(`${issue.path || '(config)'}: ${issue.message} [${issue.code}]`);
console.log(issues.length === 0 ? 'config ok' : `${issues.length} problems`);
process.exitCode = issues.length === 0 ? 0 : 1;
