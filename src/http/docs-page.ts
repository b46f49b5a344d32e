/**
 * A self-contained page that renders /openapi.json: no CDN, so it works on an
 * air-gapped install.
 */
export const docsPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Switchboard API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1c2430;background:#f7f8fa}
header{background:#1c2430;color:#fff;padding:16px 32px}header h1{margin:0;font-size:20px}
main{max-width:1000px;margin:0 auto;padding:24px 32px}
h2{border-bottom:1px solid #d8dde5;padding-bottom:4px;margin-top:32px}
details{background:#fff;border:1px solid #d8dde5;border-radius:6px;margin:8px 0}
summary{cursor:pointer;padding:10px 14px;display:flex;gap:12px;align-items:center}
.m{font:600 12px ui-monospace,monospace;text-transform:uppercase;padding:2px 8px;border-radius:4px;color:#fff;min-width:52px;text-align:center}
.get{background:#2f7d4f}.post{background:#2d5fa8}.patch{background:#a8672d}.delete{background:#a83232}.put{background:#6b3fa0}
.p{font-family:ui-monospace,monospace}.scope{margin-left:auto;font-size:12px;color:#5a6472}
.dep{text-decoration:line-through}
.body{padding:0 14px 14px}pre{background:#f1f3f6;padding:10px;border-radius:4px;overflow:auto;font-size:12px}
</style></head><body><header><h1>Switchboard API</h1><div id="desc"></div></header><main id="root">Loading…</main>
<script>
fetch('/openapi.json').then(r=>r.json()).then(doc=>{
  const esc=s=>String(s??'').replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
  document.getElementById('desc').textContent=doc.info.description||'';
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths)) for(const [m,op] of Object.entries(ops)) (byTag[op.tags[0]]??=[]).push({path,m,op});
  let html='';
  for(const [tag,ops] of Object.entries(byTag)){
    html+='<h2>'+esc(tag)+'</h2>';
    for(const {path,m,op} of ops){
      html+='<details><summary><span class="m '+m+'">'+m+'</span><span class="p'+(op.deprecated?' dep':'')+'">'+esc(path)+'</span><span>'+esc(op.summary)+'</span><span class="scope">'+esc(op['x-required-scope']||'')+'</span></summary><div class="body">';
      if(op.description) html+='<p>'+esc(op.description)+'</p>';
      if(op.parameters&&op.parameters.length) html+='<h4>Parameters</h4><pre>'+esc(op.parameters.map(p=>p.in+' '+p.name+(p.required?' (required)':'')+': '+JSON.stringify(p.schema)).join('\\n'))+'</pre>';
      if(op.requestBody) html+='<h4>Body</h4><pre>'+esc(JSON.stringify(op.requestBody.content['application/json'].schema,null,2))+'</pre>';
      for(const [st,r] of Object.entries(op.responses)) html+='<h4>'+esc(st)+' '+esc(r.description)+'</h4>'+(r.content?'<pre>'+esc(JSON.stringify(r.content['application/json'].schema,null,2))+'</pre>':'');
      html+='</div></details>';
    }
  }
  document.getElementById('root').innerHTML=html;
});
</script></body></html>`;
