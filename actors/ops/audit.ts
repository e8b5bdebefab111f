/** Operations on the audit log and operator alerts (kv/audit.ts, kv/alerts.ts). */
import { z } from "zod";
import { appendAudit, listAudit } from "../../kv/audit.ts";
import { ALERT_KINDS, clearAlert, listAlerts } from "../../kv/alerts.ts";
import { defineOp, OpError } from "./op.ts";

const AuditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  by: z.string(),
  action: z.string(),
  subject: z.string(),
  before: z.unknown(),
  after: z.unknown(),
});

export const auditList = defineOp({
  name: "audit",
  summary: "The operator audit log, oldest first (every operator change, who and when)",
  scope: "read",
  http: { method: "get", path: "/audit" },
  input: z.object({
    limit: z.string().regex(/^[1-9]\d{0,4}$/, "Must be a whole number from 1 to 99999").optional()
      .describe("At most this many entries, the newest ones"),
  }),
  output: z.object({ entries: z.array(AuditEntrySchema) }),
  run: async (ctx, input) => {
    return { entries: await listAudit(ctx.kv, input.limit ? Number(input.limit) : undefined) };
  },
  text: ({ entries }) => [
    ...entries.map((e) =>
      `${e.at}\t${e.by}\t${e.action}\t${e.subject}\tbefore=${JSON.stringify(e.before)}\tafter=${
        JSON.stringify(e.after)
      }`
    ),
    `${entries.length} audit entr${entries.length === 1 ? "y" : "ies"}`,
  ],
});

const AlertSchema = z.object({
  kind: z.enum(ALERT_KINDS),
  subject: z.string(),
  chain: z.string().nullable(),
  message: z.string(),
  count: z.number().int(),
  firstAt: z.string(),
  lastAt: z.string(),
  touched: z.unknown().optional(),
});

export const alertsList = defineOp({
  name: "alerts",
  summary: "Open operator alerts (conditions the service will not resolve alone)",
  scope: "read",
  http: { method: "get", path: "/alerts" },
  input: z.object({}),
  output: z.object({ alerts: z.array(AlertSchema) }),
  run: async (ctx) => ({ alerts: await listAlerts(ctx.kv) }),
  text: ({ alerts }) => [
    ...alerts.map((a) => `${a.kind}\t${a.subject}\t${a.chain ?? "-"}\tx${a.count}\tlast=${a.lastAt}\t${a.message}`),
    `${alerts.length} open alert(s)`,
  ],
});

export const alertsClear = defineOp({
  name: "alerts clear",
  summary: "Acknowledges an alert; it comes back if the condition is raised again",
  scope: "operate",
  http: { method: "post", path: "/alerts/clear" },
  input: z.object({ kind: z.enum(ALERT_KINDS), subject: z.string().min(1).max(200) }),
  positionals: ["kind", "subject"],
  output: z.object({ kind: z.enum(ALERT_KINDS), subject: z.string(), auditId: z.string() }),
  run: async (ctx, { kind, subject }) => {
    let auditId = "";
    const cleared = await clearAlert(ctx.kv, kind, subject, (op, alert) => {
      const entry = { by: ctx.by, action: "alert.clear", subject: `${kind}:${subject}`, before: alert, after: null };
      auditId = appendAudit(op, entry, ctx.now()).id;
    });
    if (!cleared) throw new OpError(404, `no ${kind} alert for ${subject}`);
    return { kind, subject, auditId };
  },
  text: (r) => [`cleared ${r.kind} alert for ${r.subject} (audit ${r.auditId})`],
});

export const AUDIT_OPS = [auditList, alertsList, alertsClear];
