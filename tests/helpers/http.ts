/** A small HTTP client for tests: real requests to the listening app, parsed responses. */

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else the text. */
  body: T;
  text: string;
  contentType: string;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  /** A raw body (string, Buffer, FormData, URLSearchParams); `json` takes precedence. */
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
}

export type ResponseHook = (request: { method: string; path: string }, response: TestResponse) => void;

export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly hooks: ResponseHook[] = [],
  ) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: RequestInit['body'] | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    }
    let url = `${this.baseUrl}${path}`;
    if (options.query) {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(options.query))
        if (value !== undefined) search.append(name, String(value));
      url += `${path.includes('?') ? '&' : '?'}${search.toString()}`;
    }
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    let parsed: unknown = text;
    if (/json/.test(contentType) && text.length > 0) parsed = JSON.parse(text);
    const result: TestResponse<T> = {
      status: response.status,
      headers: response.headers,
      body: parsed as T,
      text,
      contentType,
    };
    for (const hook of this.hooks) hook({ method, path }, result);
    return result;
  }

  get<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('POST', path, options);
  }
  patch<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('PATCH', path, options);
  }
  delete<T = any>(path: string, options?: RequestOptions) {
    return this.request<T>('DELETE', path, options);
  }
}
