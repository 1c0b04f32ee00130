/**
 * Cases from AWS's published Signature Version 4 test suite ("aws-sig-v4-test-suite",
 * https://docs.aws.amazon.com/general/latest/gr/signature-v4-test-suite.html), as vendored in
 * bazelbuild/bazel at third_party/aws-sig-v4-test-suite/<name>/<name>.{sreq,creq,sts}. Every case
 * signs with the suite's credentials, date, region and service below. Only the fields we check are
 * transcribed: the request, and the .creq/.sts/signature the suite gives for it.
 */
export const SUITE = {
  accessKey: 'AKIDEXAMPLE',
  secretKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  amzDate: '20150830T123600Z',
  scope: { date: '20150830', region: 'us-east-1', service: 'service' },
} as const;

export interface SuiteCase {
  readonly name: string;
  readonly method: string;
  /** As written in the .req request line. */
  readonly path: string;
  readonly query: string;
  /** Lower-case names; host and x-amz-date as in every case of the suite. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** <name>.creq, when the suite's copy holds one. */
  readonly creq?: string;
  /** <name>.sts, when the suite's copy holds one. */
  readonly sts?: string;
  /** From <name>.sreq / <name>.authz. */
  readonly signature: string;
}

const base = { host: 'example.amazonaws.com', 'x-amz-date': SUITE.amzDate };

export const CASES: readonly SuiteCase[] = [
  {
    name: 'get-vanilla', method: 'GET', path: '/', query: '', headers: base, body: '',
    signature: '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
  },
  {
    name: 'get-vanilla-query-order-key-case', method: 'GET', path: '/', query: 'Param2=value2&Param1=value1', headers: base, body: '',
    signature: 'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
  },
  {
    name: 'get-vanilla-query-order-value', method: 'GET', path: '/', query: 'Param1=value2&Param1=value1', headers: base, body: '',
    creq: 'GET\n/\nParam1=value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\nc968629d70850097a2d8781c9bf7edcb988b04cac14cca9be4acc3595f884606',
    signature: '5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694',
  },
  {
    name: 'get-utf8', method: 'GET', path: '/ሴ', query: '', headers: base, body: '',
    signature: '8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85',
  },
  {
    name: 'get-space', method: 'GET', path: '/example space/', query: '', headers: base, body: '',
    signature: '652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741',
  },
  {
    name: 'post-vanilla', method: 'POST', path: '/', query: '', headers: base, body: '',
    signature: '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
  },
  {
    name: 'post-x-www-form-urlencoded', method: 'POST', path: '/', query: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...base }, body: 'Param1=value1',
    creq: 'POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e',
    sts: 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281',
    signature: 'ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a',
  },
];
