import type { ReactNode } from 'react';
import { withoutDocumentReferences as plain } from '../../format/user-text.js';

/**
 * A diagnostic or error message. Where it starts with transformers' or the library's exact text
 * (STYLE.md §10), that first paragraph is shown as a verbatim quote people can search for; kvscope's
 * explanation (`kvscope: …`) follows as prose.
 */
export function MessageText({ message, verbatimFirst = false, verbatimLines = [], testId }: {
  message: string;
  verbatimFirst?: boolean;
  /** library texts that, where a line (or a `- ` list line) starts with one, are quoted verbatim too */
  verbatimLines?: readonly string[];
  testId?: string;
}): ReactNode {
  const paragraphs = plain(message).split('\n').filter((p) => p.trim().length > 0);
  const quoted = (paragraph: string): boolean => {
    const text = paragraph.startsWith('- ') ? paragraph.slice(2) : paragraph;
    return verbatimLines.some((line) => line.length > 0 && text.startsWith(line));
  };
  return (
    <div className="message" data-testid={testId}>
      {paragraphs.map((paragraph, index) => {
        const explanation = paragraph.startsWith('kvscope: ');
        if ((index === 0 && verbatimFirst && !explanation) || quoted(paragraph)) {
          const text = paragraph.startsWith('- ') ? paragraph.slice(2) : paragraph;
          return <blockquote key={index} className="verbatim" data-testid={testId === undefined ? undefined : `${testId}-verbatim`}>{text}</blockquote>;
        }
        return <p key={index} className={explanation ? 'explanation' : undefined}>{explanation ? paragraph.slice('kvscope: '.length) : paragraph}</p>;
      })}
    </div>
  );
}
