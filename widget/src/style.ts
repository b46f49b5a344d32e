/** The widget's styles, inside its shadow root (nothing leaks out, the page's rules do not reach in). */
export const css = `
:host{all:initial;--sb-color:#0b6bcb;position:fixed;bottom:16px;right:16px;z-index:2147483000}
.sb{all:initial;display:block;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2530}
.sb *{font:inherit;letter-spacing:normal;text-transform:none}
:host([data-position=left]){right:auto;left:16px}
*{box-sizing:border-box}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
[hidden]{display:none!important}
.launcher{position:relative;width:56px;height:56px;border-radius:50%;border:0;background:var(--sb-color);color:#fff;cursor:pointer;box-shadow:0 4px 14px rgba(0,0,0,.25);display:grid;place-items:center;margin-left:auto}
:host([data-position=left]) .launcher{margin-left:0}
.launcher svg{width:26px;height:26px;fill:currentColor}
.launcher:focus-visible,button:focus-visible,a:focus-visible,textarea:focus-visible,input:focus-visible,.log:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.badge{position:absolute;top:-4px;right:-4px;min-width:22px;height:22px;padding:0 6px;border-radius:11px;background:#c62828;color:#fff;font-size:12px!important;font-weight:700!important;line-height:22px!important;text-align:center}
.panel{position:absolute;bottom:72px;right:0;width:min(370px,calc(100vw - 32px));height:min(540px,calc(100vh - 104px));background:#fff;border-radius:12px;box-shadow:0 8px 30px rgba(0,0,0,.25);display:flex;flex-direction:column;overflow:hidden}
:host([data-position=left]) .panel{right:auto;left:0}
header{display:flex;align-items:center;justify-content:space-between;padding:12px 16px;background:var(--sb-color);color:#fff}
h2{margin:0;font-size:16px!important;font-weight:600!important}
.close{border:0;background:transparent;color:#fff;font-size:24px!important;line-height:1!important;cursor:pointer;padding:0 4px}
.log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px;background:#f6f7f9}
.msg{max-width:80%;padding:8px 12px;border-radius:14px;white-space:pre-wrap;word-wrap:break-word}
.msg.visitor{align-self:flex-end;background:var(--sb-color);color:#fff;border-bottom-right-radius:4px}
.msg.agent{align-self:flex-start;background:#fff;border:1px solid #dde1e6;border-bottom-left-radius:4px}
.typing{padding:2px 16px;font-size:13px!important;color:#5b6573}
.status{padding:0 16px;font-size:13px!important;color:#b3261e}
.compose,.prechat{display:flex;gap:8px;padding:10px;border-top:1px solid #dde1e6}
.prechat{flex-direction:column}
.prechat p{margin:0}
textarea,input{flex:1;font:inherit;padding:8px 10px;border:1px solid #b8c0ca;border-radius:8px;resize:none;min-width:0}
.attach{border:1px solid #b8c0ca;border-radius:8px;background:#fff;color:#1d2530;width:38px;font-size:20px!important;cursor:pointer}
.msg img{display:block;max-width:100%;max-height:220px;border-radius:8px}
.msg a.file{color:inherit;text-decoration:underline}
.send{border:0;border-radius:8px;padding:8px 14px;background:var(--sb-color);color:#fff;font-weight:600!important;cursor:pointer}
@media (max-width:420px){:host{bottom:12px;right:12px}.panel{position:fixed;inset:0;width:auto;height:auto;border-radius:0}.sb.open .launcher{display:none}}
`;
