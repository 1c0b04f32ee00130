// The status page's login: posts the form, then loads the page; a refusal shows its code.
'use strict';
(function () {
  const form = document.getElementById('login');
  const out = document.getElementById('login-error');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    out.textContent = '';
    const body = new URLSearchParams(new FormData(form));
    try {
      const res = await fetch('/status/login', { method: 'POST', body, credentials: 'same-origin' });
      if (res.ok) {
        window.location.assign('/status');
        return;
      }
      const doc = await res.json().catch(() => ({}));
      const err = doc.error || { code: 'HTTP ' + res.status, message: res.statusText };
      out.textContent = err.code + ': ' + err.message;
      out.dataset.code = err.code;
    } catch (e) {
      out.textContent = 'The cloud controller did not answer: ' + e.message;
      out.dataset.code = 'NoConnection';
    }
  });
})();
