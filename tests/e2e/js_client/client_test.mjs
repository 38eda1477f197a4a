// kubetaint's end-to-end test with the official JavaScript client, @kubernetes/client-node,
// against a running `kubetaint serve --nodes 2` (run by ../js_client_test.sh):
//
//   node client_test.mjs KUBECONFIG TOKEN
//
// KUBECONFIG is the one serve wrote (its CA and the admin client certificate); TOKEN is a
// bearer token of serve's --token-auth-file. Everything goes through the client's own APIs
// (KubeConfig, CoreV1Api, makeInformer, Watch, PatchStrategy with setHeaderOptions). Each
// check prints one line, "PASS name: detail" or "FAIL name: detail", and the script goes on
// after a failed check; the shell test turns the lines into its checks. Every wait polls a
// condition until a deadline: nothing here sleeps for a fixed time.
import * as k8s from '@kubernetes/client-node';

const [kubeconfigPath, token] = process.argv.slice(2);
if (!kubeconfigPath || !token) {
  console.error('usage: node client_test.mjs KUBECONFIG TOKEN');
  process.exit(2);
}

const NS = 'default';
const POD = 'js-web';
const SMP_TAINT = { key: 'example.com/js-smp', value: 'smp', effect: 'NoSchedule' };
const JSON_TAINT = { key: 'example.com/js-json', value: 'json', effect: 'PreferNoSchedule' };

let failures = 0;

// One line, whatever the error: ApiException messages span several lines (code, body,
// headers).
function describe(err) {
  const text = err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err);
  return text.replace(/\s*\n\s*/g, ' | ');
}

class CheckFailed extends Error {}

function assert(cond, what) {
  if (!cond) throw new CheckFailed(what);
}

// check NAME FN: runs FN, whose return value is the detail of a passing check; a throw fails
// it, and so does taking more than 40 s (a request the server never answers).
async function check(name, fn) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed('no result in 40s')), 40000);
  });
  try {
    const detail = await Promise.race([fn(), limit]);
    console.log(`PASS ${name}: ${detail}`);
    return true;
  } catch (err) {
    failures++;
    console.log(`FAIL ${name}: ${err instanceof CheckFailed ? err.message : describe(err)}`);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// until WHAT MS FN: polls FN every 20 ms until it returns something truthy, which it returns;
// throws after MS milliseconds, naming WHAT.
async function until(what, ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() >= deadline) throw new CheckFailed(`waited ${ms / 1000}s: ${what}`);
    await sleep(20);
  }
}

// expectApiError FN CODE: FN must throw the client's ApiException with HTTP status CODE;
// returns the exception.
async function expectApiError(fn, code) {
  try {
    const got = await fn();
    throw new CheckFailed(`succeeded (${JSON.stringify(got).slice(0, 200)}), want HTTP ${code}`);
  } catch (err) {
    if (err instanceof CheckFailed) throw err;
    assert(
      err instanceof k8s.ApiException,
      `want an ApiException with code ${code}, got ${describe(err)}`,
    );
    assert(err.code === code, `want code ${code}, got ${describe(err)}`);
    return err;
  }
}

const taintText = (t) => `${t.key}=${t.value ?? ''}:${t.effect}`;
const taintsText = (taints) => (taints ?? []).map(taintText).join(',') || '(none)';

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfigPath);
const core = kc.makeApiClient(k8s.CoreV1Api);

// --- nodes -------------------------------------------------------------------------------------
await check('list_nodes', async () => {
  const list = await core.listNode();
  const names = list.items.map((n) => n.metadata.name).sort();
  assert(JSON.stringify(names) === '["node1","node2"]', `node names ${JSON.stringify(names)}`);
  for (const n of list.items) {
    const bootID = n.status?.nodeInfo?.bootID;
    assert(
      typeof bootID === 'string' && bootID.length > 0,
      `${n.metadata.name}: no status.nodeInfo.bootID`,
    );
  }
  return list.items.map((n) => `${n.metadata.name} bootID=${n.status.nodeInfo.bootID}`).join(', ');
});

// --- an informer on pods: add, then update once the scheduler binds the pod --------------------
const informerEvents = [];
const informerErrors = [];
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/pods`, () =>
  core.listNamespacedPod({ namespace: NS }),
);
for (const verb of [k8s.ADD, k8s.UPDATE, k8s.DELETE]) {
  informer.on(verb, (pod) => informerEvents.push({ verb, pod }));
}
informer.on(k8s.ERROR, (err) => informerErrors.push(err));
const informerEvent = (verb, pred = () => true) =>
  informerEvents.find((e) => e.verb === verb && e.pod.metadata?.name === POD && pred(e.pod));
const informerTrouble = () =>
  informerErrors.length ? ` (informer errors: ${informerErrors.map(describe).join('; ')})` : '';

const informerStarted = await check('informer_start', async () => {
  await informer.start();
  assert(
    informerErrors.length === 0,
    `informer errors: ${informerErrors.map(describe).join('; ')}`,
  );
  return `listed and watching /api/v1/namespaces/${NS}/pods`;
});

await check('create_pod', async () => {
  const pod = await core.createNamespacedPod({
    namespace: NS,
    body: {
      metadata: { name: POD, labels: { app: POD } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    },
  });
  assert(pod.metadata?.uid, 'created pod has no metadata.uid');
  return `${pod.metadata.name} uid=${pod.metadata.uid} phase=${pod.status?.phase}`;
});

await check('informer_add', async () => {
  assert(informerStarted, 'informer did not start');
  const e = await until(`informer add of ${POD}${informerTrouble()}`, 30000, () =>
    informerEvent(k8s.ADD),
  );
  return `add ${e.pod.metadata.name} nodeName=${e.pod.spec.nodeName ?? '(unset)'} rv=${e.pod.metadata.resourceVersion}`;
});

await check('informer_update_bound', async () => {
  assert(informerStarted, 'informer did not start');
  const e = await until(
    `informer update of ${POD} with spec.nodeName${informerTrouble()}`,
    30000,
    () => informerEvent(k8s.UPDATE, (p) => p.spec?.nodeName),
  );
  assert(['node1', 'node2'].includes(e.pod.spec.nodeName), `bound to ${e.pod.spec.nodeName}`);
  const cached = informer.get(POD, NS);
  assert(cached?.spec?.nodeName, 'informer cache (get) has no bound pod');
  return `update ${POD} spec.nodeName=${e.pod.spec.nodeName} rv=${e.pod.metadata.resourceVersion}`;
});

// --- a raw Watch on nodes sees the taint a strategic-merge patch sets ----------------------------
const watchEvents = [];
let watchEnded = null;
let watchRequest = null;
const watchTrouble = () => (watchEnded ? ` (watch ended: ${describe(watchEnded)})` : '');

await check('watch_nodes_start', async () => {
  watchRequest = await new k8s.Watch(kc).watch(
    '/api/v1/nodes',
    {},
    (type, obj) => watchEvents.push({ type, obj }),
    (err) => {
      watchEnded = err ?? 'closed by the server';
    },
  );
  // Without a resourceVersion the watch starts with an ADDED for every node: once both are
  // in, the watch is live.
  await until(`ADDED node1 and node2 on the watch${watchTrouble()}`, 20000, () =>
    ['node1', 'node2'].every((n) =>
      watchEvents.some((e) => e.type === 'ADDED' && e.obj.metadata?.name === n),
    ),
  );
  return `ADDED node1, ADDED node2`;
});

await check('patch_strategic_merge', async () => {
  const patched = await core.patchNode(
    { name: 'node1', body: { spec: { taints: [SMP_TAINT] } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch),
  );
  assert(
    taintsText(patched.spec.taints) === taintText(SMP_TAINT),
    `patch answered taints ${taintsText(patched.spec.taints)}`,
  );
  const node = await core.readNode({ name: 'node1' });
  assert(
    taintsText(node.spec.taints) === taintText(SMP_TAINT),
    `readNode: taints ${taintsText(node.spec.taints)}`,
  );
  return `readNode node1: taints ${taintsText(node.spec.taints)}`;
});

// The content type, not the body, picks the semantics: metadata.finalizers (patchStrategy
// merge) is merged by a strategic-merge patch and replaced by a JSON merge patch.
await check('patch_content_types', async () => {
  const patch = (body, type) =>
    core.patchNode({ name: 'node2', body }, k8s.setHeaderOptions('Content-Type', type));
  const finalizers = async () =>
    JSON.stringify(((await core.readNode({ name: 'node2' })).metadata.finalizers ?? []).sort());
  await patch({ metadata: { finalizers: ['example.com/js-a'] } }, k8s.PatchStrategy.MergePatch);
  await patch(
    { metadata: { finalizers: ['example.com/js-b'] } },
    k8s.PatchStrategy.StrategicMergePatch,
  );
  const strategic = await finalizers();
  await patch({ metadata: { finalizers: ['example.com/js-c'] } }, k8s.PatchStrategy.MergePatch);
  const merge = await finalizers();
  await patch({ metadata: { finalizers: null } }, k8s.PatchStrategy.MergePatch);
  const cleared = await finalizers();
  assert(
    strategic === '["example.com/js-a","example.com/js-b"]',
    `after the strategic-merge patch: ${strategic}`,
  );
  assert(merge === '["example.com/js-c"]', `after the merge patch: ${merge}`);
  assert(cleared === '[]', `after the merge patch with null: ${cleared}`);
  return `finalizers: strategic merge ${strategic}, merge ${merge}, null ${cleared}`;
});

await check('watch_sees_taint', async () => {
  const e = await until(
    `MODIFIED node1 with ${SMP_TAINT.key} on the watch${watchTrouble()}`,
    20000,
    () =>
      watchEvents.find(
        (e) =>
          e.type === 'MODIFIED' &&
          e.obj.metadata?.name === 'node1' &&
          (e.obj.spec?.taints ?? []).some((t) => t.key === SMP_TAINT.key),
      ),
  );
  return `${e.type} node1 taints ${taintsText(e.obj.spec.taints)} rv=${e.obj.metadata.resourceVersion}`;
});

await check('patch_json', async () => {
  const ops = [
    { op: 'test', path: '/spec/taints/0/key', value: SMP_TAINT.key },
    { op: 'replace', path: '/spec/taints/0/value', value: 'smp2' },
    { op: 'add', path: '/spec/taints/-', value: JSON_TAINT },
  ];
  await core.patchNode(
    { name: 'node1', body: ops },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
  );
  const node = await core.readNode({ name: 'node1' });
  const want = [taintText({ ...SMP_TAINT, value: 'smp2' }), taintText(JSON_TAINT)].join(',');
  assert(
    taintsText(node.spec.taints) === want,
    `readNode: taints ${taintsText(node.spec.taints)}, want ${want}`,
  );
  return `readNode node1: taints ${taintsText(node.spec.taints)}`;
});

// A JSON patch whose test op fails changes nothing and is refused (upstream: 422).
await check('patch_json_test_fails', async () => {
  const ops = [
    { op: 'test', path: '/spec/taints/0/value', value: 'not-this' },
    { op: 'remove', path: '/spec/taints' },
  ];
  const err = await expectApiError(
    () =>
      core.patchNode(
        { name: 'node1', body: ops },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      ),
    422,
  );
  const node = await core.readNode({ name: 'node1' });
  assert((node.spec.taints ?? []).length === 2, `taints changed: ${taintsText(node.spec.taints)}`);
  return `HTTP ${err.code}; taints kept: ${taintsText(node.spec.taints)}`;
});

watchRequest?.abort();

// --- an invalid toleration: 422 with upstream's Status ------------------------------------------
await check('invalid_toleration_422', async () => {
  const err = await expectApiError(
    () =>
      core.createNamespacedPod({
        namespace: NS,
        body: {
          metadata: { name: 'js-bad' },
          spec: {
            containers: [{ name: 'c', image: 'nginx' }],
            tolerations: [
              { key: 'example.com/js', operator: 'Exists', value: 'v', effect: 'NoSchedule' },
            ],
          },
        },
      }),
    422,
  );
  let status;
  try {
    status = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
  } catch {
    throw new CheckFailed(`body is not JSON: ${String(err.body).slice(0, 300)}`);
  }
  const cause = 'Invalid value: "v": value must be empty when `operator` is \'Exists\'';
  const want = {
    kind: 'Status',
    status: 'Failure',
    reason: 'Invalid',
    code: 422,
    message: `Pod "js-bad" is invalid: spec.tolerations[0].operator: ${cause}`,
  };
  for (const [k, v] of Object.entries(want)) {
    assert(
      status?.[k] === v,
      `Status.${k} = ${JSON.stringify(status?.[k])}, want ${JSON.stringify(v)}`,
    );
  }
  const causes = status.details?.causes ?? [];
  assert(
    status.details?.name === 'js-bad' && status.details?.kind === 'Pod',
    `details ${JSON.stringify(status.details)}`,
  );
  assert(
    causes.length === 1 &&
      causes[0].reason === 'FieldValueInvalid' &&
      causes[0].field === 'spec.tolerations[0].operator' &&
      causes[0].message === cause,
    `details.causes ${JSON.stringify(causes)}`,
  );
  return `HTTP ${err.code} ${status.reason}: ${status.message}`;
});

// --- delete the pod: graceful, then gone ----------------------------------------------------------
// The simulated kubelet deletes the pod for good when its grace period ends (at the
// deletionTimestamp), so a short one keeps the test short.
await check('delete_pod', async () => {
  const answer = await core.deleteNamespacedPod({
    name: POD,
    namespace: NS,
    gracePeriodSeconds: 2,
  });
  const ts = answer?.metadata?.deletionTimestamp;
  assert(
    ts,
    `delete answered without metadata.deletionTimestamp: ${JSON.stringify(answer?.metadata)}`,
  );
  assert(
    answer.metadata.deletionGracePeriodSeconds === 2,
    `deletionGracePeriodSeconds ${answer.metadata.deletionGracePeriodSeconds}, want 2`,
  );
  await until(`${POD} gone (readNamespacedPod 404)`, 30000, async () => {
    try {
      await core.readNamespacedPod({ name: POD, namespace: NS });
      return false;
    } catch (err) {
      if (err instanceof k8s.ApiException && err.code === 404) return true;
      throw err;
    }
  });
  return `deletionTimestamp=${ts instanceof Date ? ts.toISOString() : ts} grace=${answer.metadata.deletionGracePeriodSeconds}s, then 404`;
});

await check('informer_delete', async () => {
  const e = await until(`informer delete of ${POD}${informerTrouble()}`, 30000, () =>
    informerEvent(k8s.DELETE),
  );
  assert(!informer.get(POD, NS), 'informer cache still has the pod');
  return `delete ${e.pod.metadata.name}`;
});
await informer.stop();

// --- bearer tokens, with a KubeConfig built in code ---------------------------------------------
const cluster = kc.getCurrentCluster();
function tokenConfig(tok, withCA = true) {
  const c = new k8s.KubeConfig();
  c.loadFromOptions({
    clusters: [
      { name: 'kubetaint', server: cluster.server, ...(withCA ? { caData: cluster.caData } : {}) },
    ],
    users: [{ name: 'js-user', token: tok }],
    contexts: [{ name: 'kubetaint', cluster: 'kubetaint', user: 'js-user' }],
    currentContext: 'kubetaint',
  });
  return c.makeApiClient(k8s.CoreV1Api);
}

await check('token_lists_pods', async () => {
  const list = await tokenConfig(token).listNamespacedPod({ namespace: NS });
  assert(Array.isArray(list.items), `no items: ${JSON.stringify(list).slice(0, 200)}`);
  return `${cluster.server}: PodList with ${list.items.length} items, resourceVersion ${list.metadata?.resourceVersion}`;
});

await check('token_wrong_401', async () => {
  const err = await expectApiError(
    () => tokenConfig(`${token}-wrong`).listNamespacedPod({ namespace: NS }),
    401,
  );
  return `HTTP ${err.code}`;
});

// The server's certificate is checked: without the CA the same request fails in TLS.
await check('token_without_ca_refused', async () => {
  try {
    await tokenConfig(token, false).listNamespacedPod({ namespace: NS });
  } catch (err) {
    const text = describe(err);
    assert(/certificate|self[- ]signed/i.test(text), `failed, but not on the certificate: ${text}`);
    return text.slice(0, 160);
  }
  throw new CheckFailed('succeeded without the CA');
});

console.log(`DONE ${failures} failed`);
process.exit(failures ? 1 : 0);
